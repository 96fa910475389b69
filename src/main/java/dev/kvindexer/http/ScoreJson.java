package dev.kvindexer.http;

import dev.kvindexer.index.OwnerMatch;
import java.util.ArrayList;
import java.util.List;

/**
 * Renders Dynamo's ScoreResponse (SPEC §7.8) with the reference's member order: {@code scores},
 * {@code frequencies}, {@code instances}; inside a breakdown {@code longest_matched, gpu, dp, cpu, disk}.
 */
final class ScoreJson {
    private ScoreJson() {
    }

    static String render(List<OwnerMatch> matches, int blockSize) {
        List<OwnerMatch> sorted = new ArrayList<>(matches);
        sorted.sort((a, b) -> {
            int c = Long.compareUnsigned(a.workerId(), b.workerId());
            return c != 0 ? c : Integer.compare(a.dpRank(), b.dpRank());
        });
        StringBuilder sb = new StringBuilder(64 + sorted.size() * 96);
        sb.append("{\"scores\":{");
        boolean firstWorker = true;
        for (int i = 0; i < sorted.size(); ) {
            int end = endOfWorker(sorted, i);
            boolean any = false;
            for (int j = i; j < end; j++) {
                OwnerMatch m = sorted.get(j);
                if (m.gpuBlocks() < 1) {
                    continue;
                }
                if (!any) {
                    sb.append(firstWorker ? "" : ",").append('"').append(Long.toUnsignedString(m.workerId())).append("\":{");
                    firstWorker = false;
                } else {
                    sb.append(',');
                }
                any = true;
                sb.append('"').append(m.dpRank()).append("\":").append((long) m.gpuBlocks() * blockSize);
            }
            if (any) {
                sb.append('}');
            }
            i = end;
        }
        sb.append("},\"frequencies\":[],\"instances\":{");
        for (int i = 0; i < sorted.size(); ) {
            int end = endOfWorker(sorted, i);
            long gpu = 0;
            long cpu = 0;
            long disk = 0;
            for (int j = i; j < end; j++) {
                OwnerMatch m = sorted.get(j);
                gpu = Math.max(gpu, m.gpuBlocks());
                cpu = Math.max(cpu, m.cpuBlocks());
                disk = Math.max(disk, m.diskBlocks());
            }
            sb.append(i == 0 ? "" : ",").append('"').append(Long.toUnsignedString(sorted.get(i).workerId()))
                    .append("\":{\"longest_matched\":").append(Math.max(gpu, Math.max(cpu, disk)) * blockSize)
                    .append(",\"gpu\":").append(gpu * blockSize).append(",\"dp\":{");
            for (int j = i; j < end; j++) {
                OwnerMatch m = sorted.get(j);
                sb.append(j == i ? "" : ",").append('"').append(m.dpRank()).append("\":")
                        .append((long) m.gpuBlocks() * blockSize);
            }
            sb.append("},\"cpu\":").append(cpu * blockSize).append(",\"disk\":").append(disk * blockSize).append('}');
            i = end;
        }
        return sb.append("}}").toString();
    }

    private static int endOfWorker(List<OwnerMatch> sorted, int start) {
        long w = sorted.get(start).workerId();
        int end = start + 1;
        while (end < sorted.size() && sorted.get(end).workerId() == w) {
            end++;
        }
        return end;
    }
}
