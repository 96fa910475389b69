package dev.kvindexer.web;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.BeanProperty;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.std.DelegatingDeserializer;
import com.fasterxml.jackson.databind.type.CollectionType;
import com.fasterxml.jackson.databind.type.MapType;
import java.io.IOException;

/**
 * The {@link Wire.Expected} and {@link Wire.Lenient} marks of record, list and map components: Jackson's own readers
 * of those types are wrapped so a value of another kind is refused in the member's words, or read as absent, in its
 * turn among the members.
 */
final class MemberShapes extends BeanDeserializerModifier {
    @Override
    public JsonDeserializer<?> modifyDeserializer(
            DeserializationConfig config, BeanDescription bean, JsonDeserializer<?> deserializer) {
        return bean.getBeanClass().isRecord() ? new Shaped(deserializer, JsonToken.START_OBJECT) : deserializer;
    }

    @Override
    public JsonDeserializer<?> modifyCollectionDeserializer(
            DeserializationConfig config, CollectionType type, BeanDescription bean, JsonDeserializer<?> deserializer) {
        return new Shaped(deserializer, JsonToken.START_ARRAY);
    }

    @Override
    public JsonDeserializer<?> modifyMapDeserializer(
            DeserializationConfig config, MapType type, BeanDescription bean, JsonDeserializer<?> deserializer) {
        return new Shaped(deserializer, JsonToken.START_OBJECT);
    }

    /** A reader that first checks its value starts as {@code start} does. */
    private static final class Shaped extends DelegatingDeserializer {
        private final JsonToken start;
        private final String name;
        private final String expected;
        private final boolean lenient;

        Shaped(JsonDeserializer<?> reader, JsonToken start) {
            this(reader, start, null, null, false);
        }

        private Shaped(JsonDeserializer<?> reader, JsonToken start, String name, String expected, boolean lenient) {
            super(reader);
            this.start = start;
            this.name = name;
            this.expected = expected;
            this.lenient = lenient;
        }

        @Override
        protected JsonDeserializer<?> newDelegatingInstance(JsonDeserializer<?> reader) {
            return new Shaped(reader, start, name, expected, lenient);
        }

        /**
         * The marks of the component read, or of the list or map this reads an element of: an element takes the
         * component's leniency, not its words, which are about the whole value.
         */
        @Override
        public JsonDeserializer<?> createContextual(DeserializationContext ctxt, BeanProperty property)
                throws JsonMappingException {
            Shaped s = (Shaped) super.createContextual(ctxt, property);
            if (property == null) {
                return s;
            }
            boolean whole = property.getType().getRawClass().isAssignableFrom(handledType());
            Wire.Expected words = whole ? property.getAnnotation(Wire.Expected.class) : null;
            return new Shaped(
                    s.getDelegatee(),
                    start,
                    property.getName(),
                    words == null ? null : words.value(),
                    property.getAnnotation(Wire.Lenient.class) != null);
        }

        @Override
        public Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            if (!p.hasToken(start)) {
                if (lenient) {
                    p.skipChildren();
                    return null;
                }
                if (expected != null) {
                    throw JsonFields.invalidType(name, expected);
                }
            }
            return super.deserialize(p, ctxt);
        }
    }
}
