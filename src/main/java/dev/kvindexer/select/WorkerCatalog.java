package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The registered workers by id (docs/api/selection.md#worker-catalog): ids are service-wide, listings sorted by model, group and id. */
public final class WorkerCatalog {
    private static final Comparator<WorkerEntry> ORDER =
            Comparator.comparing(WorkerEntry::partition).thenComparing(WorkerEntry::workerId, Long::compareUnsigned);

    private final Map<Long, WorkerEntry> byId = new HashMap<>();

    public WorkerEntry get(long workerId) {
        return byId.get(workerId);
    }

    public void put(WorkerEntry entry) {
        byId.put(entry.workerId(), entry);
    }

    public void remove(long workerId) {
        byId.remove(workerId);
    }

    /** Workers whose model and group match the filters (null matches any). */
    public List<WorkerEntry> list(String modelName, String routingGroup) {
        List<WorkerEntry> out = new ArrayList<>();
        for (WorkerEntry e : byId.values()) {
            if ((modelName == null || modelName.equals(e.modelName()))
                    && (routingGroup == null || routingGroup.equals(e.routingGroup()))) {
                out.add(e);
            }
        }
        out.sort(ORDER);
        return out;
    }

    /** The schedulable workers of a partition, by id. */
    public List<WorkerEntry> schedulable(PartitionKey p) {
        List<WorkerEntry> out = new ArrayList<>();
        for (WorkerEntry e : list(p.modelName(), p.routingGroup())) {
            if (e.lifecycle() == Lifecycle.SCHEDULABLE) {
                out.add(e);
            }
        }
        return out;
    }

    public int schedulableCount() {
        int n = 0;
        for (WorkerEntry e : byId.values()) {
            if (e.lifecycle() == Lifecycle.SCHEDULABLE) {
                n++;
            }
        }
        return n;
    }
}
