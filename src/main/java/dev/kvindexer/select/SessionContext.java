package dev.kvindexer.select;

/**
 * The session a request belongs to (docs/api/selection.md#session-affinity): its id keys the session's binding; the
 * other members describe the turn and are read for the record, the built-in selector weighs none of them.
 *
 * @param parentSessionId the session that spawned this one, or null
 * @param sessionFinal    whether the client says this is the session's last turn, or null
 * @param inputTrigger    what started this turn, or null
 */
public record SessionContext(
        String sessionId, String parentSessionId, Boolean sessionFinal, InputTrigger inputTrigger) {
    /** What started a turn, as Dynamo's {@code input_trigger} names it. */
    public enum InputTrigger {
        USER_MESSAGE("user_message"),
        TOOL_RESULT("tool_result"),
        OTHER("other");

        private final String wire;

        InputTrigger(String wire) {
            this.wire = wire;
        }

        public String wire() {
            return wire;
        }

        /** The trigger a wire name names, or null for a name Dynamo does not know. */
        public static InputTrigger of(String wire) {
            for (InputTrigger t : values()) {
                if (t.wire.equals(wire)) {
                    return t;
                }
            }
            return null;
        }
    }

    /** The session a flat {@code session_id} names, with nothing else known of it. */
    public static SessionContext of(String sessionId) {
        return new SessionContext(sessionId, null, null, null);
    }
}
