package dev.kvindexer.web;

import com.fasterxml.jackson.core.Base64Variant;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.ObjectCodec;
import com.fasterxml.jackson.core.Version;
import com.fasterxml.jackson.core.base.ParserMinimalBase;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Jackson's tokens read straight off a parsed body, so a record binds from the tree {@link JsonRequest} already holds
 * without writing it out again. A value Jackson has no token for (a packed token array) is one embedded object.
 */
final class BodyTreeParser extends ParserMinimalBase {
    private final JsonObject root;
    private final Map<String, String[]> fallbacks;
    private Frame frame;
    private Object value;
    private boolean closed;

    /**
     * @param fallbacks root members left unread when one of the members named for them is sent ({@link Wire.Fallback})
     */
    BodyTreeParser(JsonObject root, Map<String, String[]> fallbacks) {
        this.root = root;
        this.fallbacks = fallbacks;
        this.frame = new Frame(null, JsonStreamContext.TYPE_ROOT, null, null);
        this.value = root;
    }

    /** The value of the current token as the body holds it: for a start token, the whole object or array. */
    Object node() {
        return value;
    }

    /** Where the parser stands: the root, or one object or array with its place in it. */
    private static final class Frame extends JsonStreamContext {
        private final Frame parent;
        private final Iterator<? extends Map.Entry<?, ?>> members;
        private final Iterator<?> elements;
        private String name;
        private Object pending;
        /** In an object: its member's name was given, its value is next. At the root: the value was given. */
        private boolean named;

        Frame(Frame parent, int type, Iterator<? extends Map.Entry<?, ?>> members, Iterator<?> elements) {
            super(type, -1);
            this.parent = parent;
            this.members = members;
            this.elements = elements;
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
    }

    @Override
    public JsonToken nextToken() {
        if (_currToken == JsonToken.START_OBJECT) {
            Map<?, ?> m = value instanceof JsonObject o ? o.getMap() : (Map<?, ?>) value;
            frame = new Frame(frame, JsonStreamContext.TYPE_OBJECT, m.entrySet().iterator(), null);
        } else if (_currToken == JsonToken.START_ARRAY) {
            List<?> l = value instanceof JsonArray a ? a.getList() : (List<?>) value;
            frame = new Frame(frame, JsonStreamContext.TYPE_ARRAY, null, l.iterator());
        }
        return _currToken = advance();
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
                return tokenOf(value);
            }
            while (f.members.hasNext()) {
                Map.Entry<?, ?> e = f.members.next();
                if (f.parent.inRoot() && unread(String.valueOf(e.getKey()))) {
                    continue;
                }
                f.step();
                f.name = String.valueOf(e.getKey());
                f.pending = e.getValue();
                f.named = true;
                return JsonToken.FIELD_NAME;
            }
            frame = f.parent;
            value = null;
            return JsonToken.END_OBJECT;
        }
        if (f.elements.hasNext()) {
            f.step();
            value = f.elements.next();
            return tokenOf(value);
        }
        frame = f.parent;
        value = null;
        return JsonToken.END_ARRAY;
    }

    private boolean unread(String member) {
        String[] preferred = fallbacks.isEmpty() ? null : fallbacks.get(member);
        if (preferred != null) {
            for (String name : preferred) {
                if (root.getValue(name) != null) {
                    return true;
                }
            }
        }
        return false;
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
