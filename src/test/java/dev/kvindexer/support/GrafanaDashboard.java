package dev.kvindexer.support;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** deploy/grafana's dashboard as its panels' queries see it: the metric families they ask for. */
public record GrafanaDashboard(int panels, Set<String> families) {
    private static final Path FILE = Path.of("deploy", "grafana", "kvindexer-dashboard.json");
    private static final Pattern METRIC = Pattern.compile("\\b((?:kvindexer|dynamo)_[a-z0-9_]+)");

    /** Reads the dashboard: panels with queries, and every family a query names (histogram series as their family). */
    public static GrafanaDashboard read() {
        JsonObject dashboard;
        try {
            dashboard = new JsonObject(Files.readString(FILE));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Set<String> asked = new TreeSet<>();
        int panels = 0;
        for (Object p : dashboard.getJsonArray("panels")) {
            JsonArray targets = ((JsonObject) p).getJsonArray("targets");
            if (targets == null) {
                continue;
            }
            panels++;
            for (Object t : targets) {
                Matcher m = METRIC.matcher(((JsonObject) t).getString("expr"));
                while (m.find()) {
                    asked.add(m.group(1).replaceAll("_(bucket|sum|count)$", ""));
                }
            }
        }
        return new GrafanaDashboard(panels, asked);
    }

    /** The families whose name starts with {@code prefix}, or, with {@code wanted} false, all others. */
    public Set<String> families(String prefix, boolean wanted) {
        Set<String> out = new TreeSet<>();
        for (String f : families) {
            if (f.startsWith(prefix) == wanted) {
                out.add(f);
            }
        }
        return out;
    }
}
