package dev.kvindexer.web;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.util.TokenBuffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;

/**
 * A parsed body as Jackson's tokens for {@link JsonBinding}, each object bound to a record written with only that
 * record's members, in the order of its components. Jackson reads members in the order they come, so a record's first
 * failing component is the one refused, whatever order the client sent them in; a required member left out is
 * written as null where it stands, so its refusal too comes in its turn. Members a record does not name are left
 * out, as Jackson would skip them; a packed token array travels whole, as one embedded value.
 */
final class BodyTokens {
    /** One component: its wire name, its type, and whether it is {@link Wire.Required}. */
    private record Member(String name, Type type, boolean required) {}

    private static final ClassValue<List<Member>> MEMBERS = new ClassValue<>() {
        @Override
        protected List<Member> computeValue(Class<?> type) {
            RecordComponent[] components = type.getRecordComponents();
            Member[] out = new Member[components.length];
            for (int i = 0; i < out.length; i++) {
                RecordComponent c = components[i];
                JsonProperty wire = c.getAccessor().getAnnotation(JsonProperty.class);
                out[i] = new Member(
                        wire == null || wire.value().isEmpty() ? c.getName() : wire.value(),
                        c.getGenericType(),
                        c.isAnnotationPresent(Wire.Required.class));
            }
            return List.of(out);
        }
    };

    private BodyTokens() {}

    /** {@code v} as the tokens a {@code target} is read from; {@code Object} for a value of no particular shape. */
    static void write(Object v, Type target, TokenBuffer out) throws IOException {
        if (v instanceof JsonObject o) {
            writeObject(o.getMap(), target, out);
        } else if (v instanceof Map<?, ?> m) {
            writeObject(m, target, out);
        } else if (v instanceof JsonArray a) {
            writeArray(a.getList(), target, out);
        } else if (v instanceof List<?> l) {
            writeArray(l, target, out);
        } else {
            writeScalar(v, out);
        }
    }

    private static void writeObject(Map<?, ?> members, Type target, TokenBuffer out) throws IOException {
        Class<?> raw = raw(target);
        if (raw.isRecord()) {
            writeRecord(members, raw, out);
            return;
        }
        Type values = Map.class.isAssignableFrom(raw) ? argument(target, 1) : Object.class;
        out.writeStartObject();
        for (Map.Entry<?, ?> e : members.entrySet()) {
            out.writeFieldName(String.valueOf(e.getKey()));
            write(e.getValue(), values, out);
        }
        out.writeEndObject();
    }

    private static void writeRecord(Map<?, ?> members, Class<?> record, TokenBuffer out) throws IOException {
        out.writeStartObject();
        for (Member m : MEMBERS.get(record)) {
            Object v = members.get(m.name());
            if (v == null && !m.required() && !members.containsKey(m.name())) {
                continue;
            }
            out.writeFieldName(m.name());
            write(v, m.type(), out);
        }
        out.writeEndObject();
    }

    private static void writeArray(List<?> elements, Type target, TokenBuffer out) throws IOException {
        Type each = List.class.isAssignableFrom(raw(target)) ? argument(target, 0) : Object.class;
        out.writeStartArray();
        for (Object e : elements) {
            write(e, each, out);
        }
        out.writeEndArray();
    }

    private static void writeScalar(Object v, TokenBuffer out) throws IOException {
        if (v == null) {
            out.writeNull();
        } else if (v instanceof String s) {
            out.writeString(s);
        } else if (v instanceof Integer n) {
            out.writeNumber(n);
        } else if (v instanceof Long n) {
            out.writeNumber(n);
        } else if (v instanceof BigInteger n) {
            out.writeNumber(n);
        } else if (v instanceof Double n) {
            out.writeNumber(n);
        } else if (v instanceof Float n) {
            out.writeNumber(n);
        } else if (v instanceof BigDecimal n) {
            out.writeNumber(n);
        } else if (v instanceof Boolean b) {
            out.writeBoolean(b);
        } else {
            out.writeEmbeddedObject(v);
        }
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
}
