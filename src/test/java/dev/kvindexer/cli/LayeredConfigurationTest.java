package dev.kvindexer.cli;

import static dev.kvindexer.cli.ServeCommandTest.serve;
import static dev.kvindexer.cli.ServeCommandTest.slotTracker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.Main;
import dev.kvindexer.config.ServeConfig;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/** Flag > env KVINDEXER_* > --config FILE > conf/*.json, and a help that shows all of it. */
class LayeredConfigurationTest {
    @TempDir
    Path dir;

    private Path file(String json) throws IOException {
        Path f = dir.resolve("settings-" + System.nanoTime() + ".json");
        Files.writeString(f, json);
        return f;
    }

    private static ServeConfig config(Map<String, String> env, String... args) {
        return serve(env, args).config();
    }

    @Test
    void eachLayerWinsOverTheOnesBelowIt() throws IOException {
        Path settings = file("{\"port\": 9001, \"threads\": 3, \"model-name\": \"from-file\"}");
        assertEquals(8090, config(Map.of()).port(), "conf/kvindexer.json");
        assertEquals(9001, config(Map.of(), "--config", settings.toString()).port(), "the file over conf");
        Map<String, String> env = Map.of("KVINDEXER_PORT", "9002");
        assertEquals(9002, config(env, "--config", settings.toString()).port(), "env over the file");
        assertEquals(
                9003,
                config(env, "--config", settings.toString(), "--port", "9003").port(),
                "the flag over env");

        ServeConfig mixed = config(env, "--config", settings.toString(), "--model-name", "from-flag");
        assertEquals(3, mixed.threads(), "a setting only the file gives comes from the file");
        assertEquals("from-flag", mixed.modelName());
        assertEquals(2, mixed.ingestThreads(), "one nobody gives comes from conf");
    }

    @Test
    void theConfigFileCanComeFromItsEnvironmentVariableOrTheEqualsForm() throws IOException {
        Path settings = file("{\"port\": 9101}");
        assertEquals(
                9101, config(Map.of("KVINDEXER_CONFIG", settings.toString())).port());
        assertEquals(9101, config(Map.of(), "--config=" + settings).port());
    }

    @Test
    void fileValuesMayBeListsBooleansAndNull() throws IOException {
        Path settings = file("{\"peers\": [\"http://a:1\", \"http://b:2\"], \"cluster\": true, "
                + "\"cluster-members\": [\"10.0.0.1\", \"10.0.0.2\"], \"block-size\": null}");
        ServeConfig c = config(Map.of(), "--config", settings.toString());
        assertEquals(List.of("http://a:1", "http://b:2"), c.peers());
        assertTrue(c.clustered());
        assertEquals(List.of("10.0.0.1", "10.0.0.2"), c.cluster().members());
        assertEquals(null, c.blockSize(), "null leaves the setting unset");
        assertEquals(
                false,
                config(Map.of("KVINDEXER_CLUSTER", "false"), "--config", settings.toString())
                        .clustered());
    }

    @Test
    void aBadConfigFileIsAStartupErrorThatNamesTheProblem() throws IOException {
        Path typo = file("{\"prot\": 9001}");
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> Main.commandLine(new String[] {"serve", "--config", typo.toString()}, Map.of()));
        assertTrue(e.getMessage().contains("unknown setting `prot`"), e.getMessage());
        Path broken = file("{\"port\": ");
        e = assertThrows(
                IllegalArgumentException.class,
                () -> Main.commandLine(new String[] {"serve", "--config", broken.toString()}, Map.of()));
        assertTrue(e.getMessage().contains("is not a JSON object"), e.getMessage());
        e = assertThrows(
                IllegalArgumentException.class,
                () -> Main.commandLine(
                        new String[] {
                            "serve", "--config", dir.resolve("missing.json").toString()
                        },
                        Map.of()));
        assertTrue(e.getMessage().contains("cannot read config file"), e.getMessage());
        Path nested = file("{\"port\": {\"value\": 1}}");
        assertThrows(
                IllegalArgumentException.class,
                () -> Main.commandLine(new String[] {"serve", "--config", nested.toString()}, Map.of()));
        // serve's file is not the slot tracker's: only the arguments after a command's own name count.
        Path serveOnly = file("{\"threads\": 8}");
        assertEquals(
                8, serve(Map.of(), "--config", serveOnly.toString()).config().threads());
    }

    @Test
    void theSlotTrackerHasTheSameLayersUnderItsOwnPrefix() throws IOException {
        assertEquals(8091, slotTracker(Map.of()).config().port());
        SlotTrackerCommand fromEnv = slotTracker(Map.of("KVINDEXER_SLOT_TRACKER_PORT", "9201"));
        assertEquals(9201, fromEnv.config().port());
        Path settings = file("{\"request-ttl-seconds\": 60}");
        assertEquals(
                60_000,
                slotTracker(Map.of(), "--config", settings.toString()).config().requestTtlMillis());
    }

    /** conf/*.json lists every setting of its command and nothing else; the jar carries exactly that file. */
    @Test
    void confFilesNameEverySettingAndShipInTheJar() throws IOException {
        CommandLine root = Main.commandLine(new String[0], Map.of());
        for (String[] c : List.of(new String[] {"serve", "kvindexer"}, new String[] {"slot-tracker", "slot-tracker"})) {
            String repoCopy = Files.readString(Path.of("conf", c[1] + ".json"));
            try (InputStream in = getClass().getResourceAsStream("/conf/" + c[1] + ".json")) {
                assertEquals(repoCopy, new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
            Set<String> options = new TreeSet<>();
            for (OptionSpec o : root.getSubcommands().get(c[0]).getCommandSpec().options()) {
                options.add(o.longestName().substring(2));
            }
            options.removeAll(Set.of("config", "help", "version"));
            assertEquals(options, new TreeSet<>(new JsonObject(repoCopy).fieldNames()), "conf/" + c[1] + ".json");
        }
    }

    /** {@code serve --help}: every option with its environment variable and its default. */
    @Test
    void helpShowsEveryOptionWithItsEnvironmentVariableAndDefault() {
        CommandLine root = Main.commandLine(new String[0], Map.of());
        for (String[] c :
                List.of(new String[] {"serve", Main.SERVE_ENV}, new String[] {"slot-tracker", Main.SLOT_TRACKER_ENV})) {
            CommandLine sub = root.getSubcommands().get(c[0]);
            String help = sub.getUsageMessage().replaceAll("\\s+", " ");
            for (OptionSpec o : sub.getCommandSpec().options()) {
                String name = o.longestName();
                if (name.equals("--help") || name.equals("--version")) {
                    continue;
                }
                String description = String.join(" ", o.description());
                assertTrue(description.contains("env " + LayeredDefaults.envName(c[1], o)), name + ": " + description);
                if (!name.equals("--config")) {
                    assertTrue(description.contains("default: "), name + ": " + description);
                }
                assertTrue(o.hidden() || help.contains(name), name);
            }
        }
        String help = root.getSubcommands().get("serve").getUsageMessage().replaceAll("\\s+", " ");
        assertTrue(help.contains("KVINDEXER_PORT; default: 8090"), "defaults come from conf/kvindexer.json:\n" + help);
    }
}
