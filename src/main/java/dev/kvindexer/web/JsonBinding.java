package dev.kvindexer.web;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.BeanProperty;
import com.fasterxml.jackson.databind.DatabindException;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.deser.ContextualDeserializer;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.ContextualSerializer;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;

/**
 * Binds a request body to its record, and writes an answer record, with Jackson. The body is parsed once, JSON or
 * msgpack ({@link JsonRequest}), with a long {@code token_ids} array already packed; Jackson reads that tree in place
 * ({@link BodyTreeParser}), each record's members in the order of its components, and binds the record named by the
 * route. Each component is read by {@link JsonFields}' rules, chosen by its Java type and {@link Wire} marks, so every flavor keeps the
 * reference's refusals word for word, in the order its hand reading met them; a record's constructor adds the checks
 * that span fields. Unknown members are ignored, as serde does by default.
 */
public final class JsonBinding {
    private static final JsonMapper MAPPER = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(DeserializationFeature.WRAP_EXCEPTIONS)
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .addModule(new SimpleModule("kvindexer-request-fields")
                    .addDeserializer(String.class, new FieldReader<>(String.class))
                    .addDeserializer(long.class, new FieldReader<>(long.class))
                    .addDeserializer(Long.class, new FieldReader<>(Long.class))
                    .addDeserializer(int.class, new FieldReader<>(int.class))
                    .addDeserializer(Integer.class, new FieldReader<>(Integer.class))
                    .addDeserializer(int[].class, new FieldReader<>(int[].class))
                    .addDeserializer(long[].class, new FieldReader<>(long[].class))
                    .addDeserializer(Boolean.class, new FieldReader<>(Boolean.class))
                    .addDeserializer(Double.class, new FieldReader<>(Double.class))
                    .addDeserializer(JsonObject[].class, new FieldReader<>(JsonObject[].class))
                    .addDeserializer(Object.class, new AsParsed())
                    .addSerializer(long.class, new U64Writer())
                    .addSerializer(Long.class, new U64Writer())
                    .addSerializer(JsonObject.class, new TreeWriter<>(JsonObject.class))
                    .addSerializer(JsonArray.class, new TreeWriter<>(JsonArray.class))
                    .addSerializer(JsonBodyReader.PackedTokens.class, new PackedTokensWriter())
                    .setDeserializerModifier(new MemberShapes()))
            .build();

    private static final ClassValue<ObjectReader> READERS = new ClassValue<>() {
        @Override
        protected ObjectReader computeValue(Class<?> type) {
            return MAPPER.readerFor(type);
        }
    };

    private static final ObjectWriter WRITER = MAPPER.writer();

    private JsonBinding() {}

    /** The request's body (parsed once per request) as a {@code type}. */
    public static <T> T bind(RoutingContext ctx, Class<T> type) {
        return bind(JsonRequest.of(ctx).body(), type);
    }

    /**
     * An answer record (or a list of them) as JSON: components as snake_case members in their declared order unless a
     * {@code @JsonProperty} names them, and a {@code long} as the u64 it holds unless it is {@link Wire.Signed}.
     */
    public static Buffer encode(Object answer) {
        try {
            return Buffer.buffer(WRITER.writeValueAsBytes(answer));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code body} as a {@code type}, or the {@link HttpError} its first unreadable field gets. */
    public static <T> T bind(JsonObject body, Class<T> type) {
        try (JsonParser p = new BodyTreeParser(body, type)) {
            return READERS.get(type).readValue(p);
        } catch (DatabindException e) {
            throw refusal(e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The refusal a record or one of its fields threw (Jackson wraps what a constructor throws), or, for a member whose
     * whole shape is wrong (a string where an object belongs), a 422 naming where it is.
     */
    private static HttpError refusal(DatabindException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof HttpError refusal) {
                return refusal;
            }
        }
        if (!(e instanceof MismatchedInputException)) {
            // A record that cannot be bound, or a constructor that failed otherwise, is this server's fault.
            throw new IllegalStateException("cannot bind a request body: " + e.getOriginalMessage(), e);
        }
        String where = e.getProcessor() instanceof JsonParser p ? where(p.getParsingContext()) : "";
        return where.isEmpty()
                ? HttpError.shape("invalid type, expected an object")
                : JsonFields.invalidType(where, "an object");
    }

    /** Where the parser stands, as the refusals name a member: {@code list[2].inner}. */
    private static String where(JsonStreamContext context) {
        Deque<String> parts = new ArrayDeque<>();
        for (JsonStreamContext c = context; c != null && !c.inRoot(); c = c.getParent()) {
            if (c.inArray()) {
                parts.push("[" + c.getCurrentIndex() + "]");
            } else if (c.getCurrentName() != null) {
                parts.push(c.getCurrentName());
            }
        }
        StringBuilder out = new StringBuilder();
        for (String part : parts) {
            out.append(out.length() == 0 || part.startsWith("[") ? "" : ".").append(part);
        }
        return out.toString();
    }

    /** What a field of one Java type is read as, given its marks. */
    private enum Kind {
        TEXT,
        ID,
        U64,
        I64,
        U32_WIDE,
        U32,
        BOOL,
        F64,
        TOKENS,
        HASHES,
        SIGNED_HASHES,
        HASHES_OR_TEXT,
        OBJECTS;

        static Kind of(Class<?> type, BeanProperty p) {
            if (type == String.class) {
                return marked(p, Wire.Id.class) ? ID : TEXT;
            }
            if (type == long.class || type == Long.class) {
                return marked(p, Wire.Signed.class) ? I64 : marked(p, Wire.U32.class) ? U32_WIDE : U64;
            }
            if (type == int.class || type == Integer.class) {
                return U32;
            }
            if (type == Boolean.class) {
                return BOOL;
            }
            if (type == Double.class) {
                return F64;
            }
            if (type == int[].class) {
                return TOKENS;
            }
            if (type == JsonObject[].class) {
                return OBJECTS;
            }
            return marked(p, Wire.Signed.class)
                    ? SIGNED_HASHES
                    : marked(p, Wire.DecimalText.class) ? HASHES_OR_TEXT : HASHES;
        }
    }

    private static boolean marked(BeanProperty p, Class<? extends java.lang.annotation.Annotation> mark) {
        return p != null && p.getAnnotation(mark) != null;
    }

    /** Where a reader's values stand: a member's own value, or the elements of a list or the values of a map. */
    private enum Place {
        MEMBER,
        LIST,
        MAP
    }

    /** A component's {@link Wire} marks, read once when its reader is made rather than at every value. */
    private record Marks(boolean required, boolean nullRefused, boolean lenient, boolean f32, Wire.Ranks ranks) {
        static final Marks NONE = new Marks(false, false, false, false, null);

        static Marks of(BeanProperty p) {
            return new Marks(
                    marked(p, Wire.Required.class),
                    marked(p, Wire.NullRefused.class),
                    marked(p, Wire.Lenient.class),
                    marked(p, Wire.F32.class),
                    p.getAnnotation(Wire.Ranks.class));
        }
    }

    /**
     * Reads one field by {@link JsonFields}' rules; contextual, so each instance knows its field's name and marks. An
     * element of a list is named by the list, a value of a map by the map and its key.
     */
    private static final class FieldReader<T> extends StdDeserializer<T> implements ContextualDeserializer {
        private final Kind kind;
        private final String name;
        private final Place place;
        private final Marks marks;

        FieldReader(Class<T> type) {
            this(type, Kind.of(type, null), "", Place.MEMBER, Marks.NONE);
        }

        private FieldReader(Class<T> type, Kind kind, String name, Place place, Marks marks) {
            super(type);
            this.kind = kind;
            this.name = name;
            this.place = place;
            this.marks = marks;
        }

        @Override
        @SuppressWarnings("unchecked")
        public JsonDeserializer<?> createContextual(DeserializationContext ctxt, BeanProperty property) {
            if (property == null) {
                return this;
            }
            Class<T> type = (Class<T>) handledType();
            JavaType holder = property.getType();
            Place place = holder.getRawClass() == type
                    ? Place.MEMBER
                    : holder.isMapLikeType() ? Place.MAP : holder.isCollectionLikeType() ? Place.LIST : Place.MEMBER;
            return new FieldReader<>(type, Kind.of(type, property), property.getName(), place, Marks.of(property));
        }

        @Override
        public T deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            if (kind == Kind.TOKENS) {
                return cast(tokens(p));
            }
            if (kind == Kind.OBJECTS) {
                return cast(objects(p));
            }
            if (kind == Kind.HASHES || kind == Kind.SIGNED_HASHES || kind == Kind.HASHES_OR_TEXT) {
                return cast(hashes(p));
            }
            return read(p.currentName(), node(p));
        }

        @SuppressWarnings("unchecked")
        private static <T> T cast(Object v) {
            return (T) v;
        }

        /** One value by its kind's rule; {@code key} is the map key it stands under, if it is a map's value. */
        private T read(String key, Object v) {
            String field = place == Place.MAP ? name + "." + key : name;
            Object out = switch (kind) {
                case TEXT -> JsonFields.text(field, v);
                case ID -> JsonFields.id(field, v);
                case U64 -> JsonFields.u64(field, v);
                case I64 -> JsonFields.i64(field, v);
                case U32_WIDE -> JsonFields.u32Wide(field, v);
                case U32 -> JsonFields.u32(field, v);
                case BOOL -> JsonFields.bool(field, v);
                case F64 -> JsonFields.number(field, v, marks.f32() ? "f32" : "f64");
                default -> throw new IllegalStateException(kind.name());
            };
            if (marks.ranks() != null && place == Place.MAP) {
                JsonFields.rankEntry(name, key, (String) out, marks.ranks().maxChars());
            }
            return cast(out);
        }

        /** Null is absent for a member, but an element of a list or map must be a value of its kind. */
        @Override
        public T getNullValue(DeserializationContext ctxt) {
            if (place != Place.MEMBER) {
                return read(ctxt.getParser().getParsingContext().getCurrentName(), null);
            }
            if (marks.nullRefused() && !marks.required()) {
                throw JsonFields.nullString(name);
            }
            return absent();
        }

        @Override
        public Object getAbsentValue(DeserializationContext ctxt) {
            return absent();
        }

        private T absent() {
            if (marks.required()) {
                throw JsonFields.missing(name);
            }
            Class<?> type = handledType();
            return cast(type == long.class ? (Object) 0L : type == int.class ? (Object) 0 : null);
        }

        private int[] tokens(JsonParser p) throws IOException {
            if (p.currentToken() == JsonToken.VALUE_EMBEDDED_OBJECT
                    && p.getEmbeddedObject() instanceof JsonBodyReader.PackedTokens packed) {
                return packed.tokens();
            }
            if (!p.isExpectedStartArrayToken()) {
                if (marks.lenient()) {
                    p.skipChildren();
                    return null;
                }
                throw JsonFields.notAnArray(name);
            }
            int[] out = new int[16];
            int n = 0;
            while (p.nextToken() != JsonToken.END_ARRAY) {
                if (n == out.length) {
                    out = Arrays.copyOf(out, n * 2);
                }
                out[n] = JsonFields.token(name, n, node(p));
                n++;
            }
            return Arrays.copyOf(out, n);
        }

        private long[] hashes(JsonParser p) throws IOException {
            if (!p.isExpectedStartArrayToken()) {
                throw JsonFields.notAnArray(name);
            }
            long[] out = new long[16];
            int n = 0;
            while (p.nextToken() != JsonToken.END_ARRAY) {
                if (n == out.length) {
                    out = Arrays.copyOf(out, n * 2);
                }
                Object v = node(p);
                out[n] = kind == Kind.SIGNED_HASHES
                        ? JsonFields.signedHash(name, n, v)
                        : JsonFields.hash(name, n, v, kind == Kind.HASHES_OR_TEXT);
                n++;
            }
            return Arrays.copyOf(out, n);
        }

        /**
         * The objects of an array, each as the parsed body holds it: the route binds them one at a time, so a refusal
         * can name the element it came from.
         */
        private JsonObject[] objects(JsonParser p) throws IOException {
            if (!p.isExpectedStartArrayToken()) {
                throw JsonFields.notAnArray(name);
            }
            List<JsonObject> out = new ArrayList<>();
            while (p.nextToken() != JsonToken.END_ARRAY) {
                if (!(node(p) instanceof JsonObject o)) {
                    throw JsonFields.notAnObject(name, out.size());
                }
                out.add(o);
            }
            return out.toArray(new JsonObject[0]);
        }
    }

    /**
     * A member of no particular shape (echoed as sent) taken as the parsed body holds it, without reading it again:
     * Jackson's own reader of untyped values would recurse once per level of a body nested as deep as the parser
     * allows.
     */
    private static final class AsParsed extends StdDeserializer<Object> {
        AsParsed() {
            super(Object.class);
        }

        @Override
        public Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            Object node = node(p);
            return node instanceof JsonObject o ? o.getMap() : node instanceof JsonArray a ? a.getList() : node;
        }
    }

    /** Writes a Vert.x JSON value held in an answer as its members or elements, not as a bean. */
    private static final class TreeWriter<T> extends StdSerializer<T> {
        TreeWriter(Class<T> type) {
            super(type);
        }

        @Override
        public void serialize(T value, JsonGenerator out, SerializerProvider provider) throws IOException {
            provider.defaultSerializeValue(
                    value instanceof JsonObject o ? o.getMap() : ((JsonArray) value).getList(), out);
        }
    }

    /** Writes a packed token array held in an echoed member as the array of u32s the body sent. */
    private static final class PackedTokensWriter extends StdSerializer<JsonBodyReader.PackedTokens> {
        PackedTokensWriter() {
            super(JsonBodyReader.PackedTokens.class);
        }

        @Override
        public void serialize(JsonBodyReader.PackedTokens value, JsonGenerator out, SerializerProvider provider)
                throws IOException {
            int[] tokens = value.tokens();
            out.writeStartArray(value, tokens.length);
            for (int t : tokens) {
                out.writeNumber(Integer.toUnsignedLong(t));
            }
            out.writeEndArray();
        }
    }

    /** Writes a {@code long} as the u64 it holds (ids above 2^63 unsigned), or signed where {@link Wire.Signed}. */
    private static final class U64Writer extends StdSerializer<Long> implements ContextualSerializer {
        private final boolean signed;

        U64Writer() {
            this(false);
        }

        private U64Writer(boolean signed) {
            super(Long.class);
            this.signed = signed;
        }

        @Override
        public JsonSerializer<?> createContextual(SerializerProvider provider, BeanProperty property) {
            return marked(property, Wire.Signed.class) == signed ? this : new U64Writer(!signed);
        }

        @Override
        public void serialize(Long value, JsonGenerator out, SerializerProvider provider) throws IOException {
            if (signed || value >= 0) {
                out.writeNumber(value);
            } else {
                out.writeNumber(Long.toUnsignedString(value));
            }
        }
    }

    /**
     * The current token's value as the parsed body holds it, an array or object whole and its tokens skipped (a field's
     * refusal names an array or object only by its kind): {@link #bind} always reads through a {@link BodyTreeParser},
     * so nothing is read twice.
     */
    private static Object node(JsonParser p) throws IOException {
        Object node = ((BodyTreeParser) p).node();
        p.skipChildren();
        return node;
    }
}
