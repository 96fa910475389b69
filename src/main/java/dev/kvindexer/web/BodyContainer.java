package dev.kvindexer.web;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An array or object of a request body being read, kept on the body reader's heap stack rather than the thread's:
 * recursion as deep as the nesting bound, each frame as large as the JIT makes it, can overflow an event loop's stack.
 */
class BodyContainer {
    private final List<Object> items;
    private final Map<String, Object> members;
    /** The member whose value comes next, in an object. */
    String key;
    /** Values added; an object's size may be less, as a repeated key replaces the earlier value. */
    int filled;

    /** An array, or with {@code object} an object, presized for {@code capacity} values. */
    BodyContainer(boolean object, int capacity) {
        this.items = object ? null : new ArrayList<>(capacity);
        this.members = object ? new LinkedHashMap<>(capacity) : null;
    }

    /** An array that already holds {@code items}. */
    BodyContainer(List<Object> items) {
        this.items = items;
        this.members = null;
    }

    boolean isArray() {
        return items != null;
    }

    void add(Object value) {
        filled++;
        if (items != null) {
            items.add(value);
        } else {
            members.put(key, value);
        }
    }

    /** The finished container as the JSON value it stands for. */
    Object value() {
        return items != null ? new JsonArray(items) : new JsonObject(members);
    }
}
