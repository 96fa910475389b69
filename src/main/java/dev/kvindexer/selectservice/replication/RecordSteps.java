package dev.kvindexer.selectservice.replication;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.HazelcastInstanceAware;
import com.hazelcast.map.EntryProcessor;
import dev.kvindexer.cluster.SealedBytes;
import dev.kvindexer.select.Reservation;
import java.util.Arrays;
import java.util.Map;

/**
 * The steps {@link ClusterLoad} applies to the cluster's reservation map, each run atomically on the entry's owner,
 * so steps from different replicas never overwrite each other.
 */
final class RecordSteps {
    private RecordSteps() {}

    /** Stores a booking unless the id is taken; returns the record already there, or null. */
    static final class Claim implements EntryProcessor<String, byte[], byte[]> {
        private static final long serialVersionUID = 1L;
        private final byte[] record;

        Claim(byte[] record) {
            this.record = record;
        }

        @Override
        public byte[] process(Map.Entry<String, byte[]> entry) {
            if (entry.getValue() != null) {
                return entry.getValue();
            }
            entry.setValue(record);
            return null;
        }
    }

    /** Removes the record if it is still these bytes: a booking claimed since the pass read the map stays. */
    static final class Drop implements EntryProcessor<String, byte[], byte[]> {
        private static final long serialVersionUID = 1L;
        private final byte[] bytes;

        Drop(byte[] bytes) {
            this.bytes = bytes;
        }

        @Override
        public byte[] process(Map.Entry<String, byte[]> entry) {
            if (Arrays.equals(entry.getValue(), bytes)) {
                entry.setValue(null);
            }
            return null;
        }
    }

    /** Removes the record, returning it (null when there was none). */
    static final class Take implements EntryProcessor<String, byte[], byte[]> {
        private static final long serialVersionUID = 1L;

        @Override
        public byte[] process(Map.Entry<String, byte[]> entry) {
            byte[] v = entry.getValue();
            if (v != null) {
                entry.setValue(null);
            }
            return v;
        }
    }

    /**
     * Removes the record if it is still that booking of its id (a later booking of the id stays). Its seal is not
     * checked: removing a forgery is no harm.
     */
    static final class EndIncarnation implements EntryProcessor<String, byte[], byte[]>, HazelcastInstanceAware {
        private static final long serialVersionUID = 1L;
        private final long incarnation;
        private transient SealedBytes seals;

        EndIncarnation(long incarnation) {
            this.incarnation = incarnation;
        }

        @Override
        public void setHazelcastInstance(HazelcastInstance member) {
            seals = SealedBytes.of(member);
        }

        @Override
        public byte[] process(Map.Entry<String, byte[]> entry) {
            if (entry.getValue() != null
                    && Reservation.decode(seals.peek(entry.getValue())).incarnation() == incarnation) {
                entry.setValue(null);
            }
            return null;
        }
    }

    /**
     * Advances the stored record's lifecycle: its prefill done, or one more output block. Runs on the map entry's
     * owner, so concurrent steps from different replicas never overwrite each other; the owner checks the stored
     * seal and seals the result with its own token, so a forged record is never advanced into a sealed one.
     */
    static final class Advance implements EntryProcessor<String, byte[], byte[]>, HazelcastInstanceAware {
        private static final long serialVersionUID = 1L;
        private final boolean prefill;
        private final double decayFraction;
        private transient SealedBytes seals;

        private Advance(boolean prefill, double decayFraction) {
            this.prefill = prefill;
            this.decayFraction = decayFraction;
        }

        static Advance prefillDone() {
            return new Advance(true, Double.NaN);
        }

        static Advance outputBlock(double decayFraction) {
            return new Advance(false, decayFraction);
        }

        @Override
        public void setHazelcastInstance(HazelcastInstance member) {
            seals = SealedBytes.of(member);
        }

        @Override
        public byte[] process(Map.Entry<String, byte[]> entry) {
            byte[] bytes =
                    entry.getValue() == null ? null : seals.open(ClusterLoad.RECORDS, entry.getKey(), entry.getValue());
            if (bytes == null) {
                return null;
            }
            Reservation r = Reservation.decode(bytes);
            if (prefill && r.prefillDone()) {
                return entry.getValue();
            }
            byte[] next = seals.seal(
                    ClusterLoad.RECORDS,
                    entry.getKey(),
                    (prefill ? r.withPrefillDone() : r.withOutputBlock(decayFraction)).encode());
            entry.setValue(next);
            return next;
        }
    }
}
