package dev.kvindexer.web;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.Base64Variant;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.ObjectCodec;
import com.fasterxml.jackson.core.Version;
import com.fasterxml.jackson.core.base.ParserMinimalBase;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Jackson's tokens read straight off a parsed body, so a record binds from the tree {@link JsonRequest} already holds
 * without writing it out again. An object bound to a record gives only that record's members, in the order of its
 * components: Jackson reads members in the order they come, so a record's first failing component is the one refused
 * whatever order the client sent them in, and a required member left out comes as null in its turn, to be refused
 * there. Members a record does not name are never read; a {@link Wire.Fallback} member is left out when a member it
 * stands in for is sent. A value Jackson has no token for (a packed token array) is one embedded object.
 */
final class BodyTreeParser extends ParserMinimalBase {
    /** One record component: its wire name, its type, whether it is required, and the members it stands in for. */
    private record Member(String name, Type type, boolean required, String[] fallbackFor) {}

    private static final PropertyNamingStrategies.NamingBase WIRE_NAMES =
            new PropertyNamingStrategies.SnakeCaseStrategy();

    private static final ClassValue<Member[]> MEMBERS = new ClassValue<>() {
        @Override
        protected Member[] computeValue(Class<?> type) {
            RecordComponent[] components = type.getRecordComponents();
            Member[] out = new Member[components.length];
            for (int i = 0; i < out.length; i++) {
                RecordComponent c = components[i];
                JsonProperty wire = c.getAccessor().getAnnotation(JsonProperty.class);
                Wire.Fallback fallback = c.getAccessor().getAnnotation(Wire.Fallback.class);
                out[i] = new Member(
                        wire == null || wire.value().isEmpty() ? WIRE_NAMES.translate(c.getName()) : wire.value(),
                        c.getGenericType(),
                        c.isAnnotationPresent(Wire.Required.class),
                        fallback == null ? null : fallback.value());
            }
            return out;
        }
    };

    private Frame frame;
    private Object value;
    /** What the current value is bound to: a record, a list or map of something, or anything. */
    private Type target;

    private boolean closed;

    BodyTreeParser(JsonObject root, Class<?> type) {
        this.frame = new Frame(null, JsonStreamContext.TYPE_ROOT);
        this.value = root;
        this.target = type;
    }

    /** The value of the current token as the body holds it: for a start token, the whole object or array. */
    Object node() {
        return value;
    }

    /** Where the parser stands: the root, or one object or array with its place in it. */
    private static final class Frame extends JsonStreamContext {
        private final Frame parent;
        /** An object bound to a record: its members, the next to give, and the object's own members. */
        private Member[] members;

        private int next;
        private Map<?, ?> object;
        /** Any other object's members, or an array's elements, and what each is bound to. */
        private Iterator<? extends Map.Entry<?, ?>> entries;

        private Iterator<?> elements;
        private Type each;
        private String name;
        private Object pending;
        private Type pendingTarget;
        /** In an object: its member's name was given, its value is next. At the root: the value was given. */
        private boolean named;

        Frame(Frame parent, int type) {
            super(type, -1);
            this.parent = parent;
        }

        void step() {
            _index++;
        }

        @Override
        public JsonStreamContext getParent() {
            return parent;
        }

        @Override
        public String getCurrentName() {
            return name;
        }

        /** Gives member {@code name} next, its value {@code v} bound to {@code t}. */
        JsonToken member(String name, Object v, Type t) {
            step();
            this.name = name;
            pending = v;
            pendingTarget = t;
            named = true;
            return JsonToken.FIELD_NAME;
        }
    }

    @Override
    public JsonToken nextToken() {
        if (_currToken == JsonToken.START_OBJECT) {
            frame = objectFrame(value instanceof JsonObject o ? o.getMap() : (Map<?, ?>) value, raw(target));
        } else if (_currToken == JsonToken.START_ARRAY) {
            Class<?> raw = raw(target);
            Frame f = new Frame(frame, JsonStreamContext.TYPE_ARRAY);
            f.elements = (value instanceof JsonArray a ? a.getList() : (List<?>) value).iterator();
            f.each = List.class.isAssignableFrom(raw)
                    ? argument(target, 0)
                    : raw.isArray() ? raw.getComponentType() : Object.class;
            frame = f;
        }
        return _currToken = advance();
    }

    private Frame objectFrame(Map<?, ?> object, Class<?> raw) {
        Frame f = new Frame(frame, JsonStreamContext.TYPE_OBJECT);
        if (raw.isRecord()) {
            f.members = MEMBERS.get(raw);
            f.object = object;
        } else {
            f.entries = object.entrySet().iterator();
            f.each = Map.class.isAssignableFrom(raw) ? argument(target, 1) : Object.class;
        }
        return f;
    }

    private JsonToken advance() {
        Frame f = frame;
        if (f.inRoot()) {
            if (f.named || closed) {
                return null;
            }
            f.named = true;
            return tokenOf(value);
        }
        if (f.inObject()) {
            if (f.named) {
                f.named = false;
                value = f.pending;
                target = f.pendingTarget;
                return tokenOf(value);
            }
            if (f.members != null) {
                while (f.next < f.members.length) {
                    Member m = f.members[f.next++];
                    Object v = f.object.get(m.name());
                    if ((v != null || m.required() || f.object.containsKey(m.name()))
                            && !anySent(f.object, m.fallbackFor())) {
                        return f.member(m.name(), v, m.type());
                    }
                }
            } else if (f.entries.hasNext()) {
                Map.Entry<?, ?> e = f.entries.next();
                return f.member(String.valueOf(e.getKey()), e.getValue(), f.each);
            }
            frame = f.parent;
            value = null;
            return JsonToken.END_OBJECT;
        }
        if (f.elements.hasNext()) {
            f.step();
            value = f.elements.next();
            target = f.each;
            return tokenOf(value);
        }
        frame = f.parent;
        value = null;
        return JsonToken.END_ARRAY;
    }

    private static boolean anySent(Map<?, ?> object, String[] names) {
        if (names != null) {
            for (String name : names) {
                if (object.get(name) != null) {
                    return true;
                }
            }
        }
        return false;
    }

    private static Class<?> raw(Type t) {
        if (t instanceof Class<?> c) {
            return c;
        }
        return t instanceof ParameterizedType p && p.getRawType() instanceof Class<?> c ? c : Object.class;
    }

    private static Type argument(Type t, int i) {
        return t instanceof ParameterizedType p && p.getActualTypeArguments().length > i
                ? p.getActualTypeArguments()[i]
                : Object.class;
    }

    private static JsonToken tokenOf(Object v) {
        if (v == null) {
            return JsonToken.VALUE_NULL;
        }
        if (v instanceof String) {
            return JsonToken.VALUE_STRING;
        }
        if (v instanceof Integer || v instanceof Long || v instanceof BigInteger) {
            return JsonToken.VALUE_NUMBER_INT;
        }
        if (v instanceof Number) {
            return JsonToken.VALUE_NUMBER_FLOAT;
        }
        if (v instanceof Boolean b) {
            return b ? JsonToken.VALUE_TRUE : JsonToken.VALUE_FALSE;
        }
        if (v instanceof JsonObject || v instanceof Map) {
            return JsonToken.START_OBJECT;
        }
        if (v instanceof JsonArray || v instanceof List) {
            return JsonToken.START_ARRAY;
        }
        return JsonToken.VALUE_EMBEDDED_OBJECT;
    }

    @Override
    public String getCurrentName() {
        return frame.name;
    }

    @Override
    public void overrideCurrentName(String name) {
        frame.name = name;
    }

    @Override
    public JsonStreamContext getParsingContext() {
        return frame;
    }

    @Override
    public String getText() {
        if (_currToken == null) {
            return null;
        }
        return switch (_currToken) {
            case FIELD_NAME -> frame.name;
            case VALUE_STRING, VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT, VALUE_EMBEDDED_OBJECT -> String.valueOf(value);
            default -> _currToken.asString();
        };
    }

    @Override
    public char[] getTextCharacters() {
        String text = getText();
        return text == null ? null : text.toCharArray();
    }

    @Override
    public boolean hasTextCharacters() {
        return false;
    }

    @Override
    public int getTextLength() {
        String text = getText();
        return text == null ? 0 : text.length();
    }

    @Override
    public int getTextOffset() {
        return 0;
    }

    @Override
    public Object getEmbeddedObject() {
        return _currToken == JsonToken.VALUE_EMBEDDED_OBJECT ? value : null;
    }

    @Override
    public Number getNumberValue() {
        return (Number) value;
    }

    @Override
    public NumberType getNumberType() {
        Object v = value;
        if (v instanceof Integer) {
            return NumberType.INT;
        }
        if (v instanceof Long) {
            return NumberType.LONG;
        }
        if (v instanceof BigInteger) {
            return NumberType.BIG_INTEGER;
        }
        if (v instanceof Float) {
            return NumberType.FLOAT;
        }
        return v instanceof BigDecimal ? NumberType.BIG_DECIMAL : NumberType.DOUBLE;
    }

    @Override
    public int getIntValue() {
        return getNumberValue().intValue();
    }

    @Override
    public long getLongValue() {
        return getNumberValue().longValue();
    }

    @Override
    public BigInteger getBigIntegerValue() {
        Number n = getNumberValue();
        return n instanceof BigInteger b ? b : BigInteger.valueOf(n.longValue());
    }

    @Override
    public float getFloatValue() {
        return getNumberValue().floatValue();
    }

    @Override
    public double getDoubleValue() {
        return getNumberValue().doubleValue();
    }

    @Override
    public BigDecimal getDecimalValue() {
        Number n = getNumberValue();
        return n instanceof BigDecimal d ? d : new BigDecimal(n.toString());
    }

    @Override
    public byte[] getBinaryValue(Base64Variant variant) {
        return null;
    }

    @Override
    protected void _handleEOF() {}

    @Override
    public void close() {
        closed = true;
        _currToken = null;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public ObjectCodec getCodec() {
        return null;
    }

    @Override
    public void setCodec(ObjectCodec codec) {}

    @Override
    public Version version() {
        return Version.unknownVersion();
    }

    @Override
    public JsonLocation getCurrentLocation() {
        return JsonLocation.NA;
    }

    @Override
    public JsonLocation getTokenLocation() {
        return JsonLocation.NA;
    }
}
