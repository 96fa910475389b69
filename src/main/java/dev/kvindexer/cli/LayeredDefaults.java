package dev.kvindexer.cli;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Where an option's value comes from when the command line does not give it: the environment
 * ({@code <prefix><OPTION_NAME>}, e.g. {@code KVINDEXER_INGEST_THREADS}), then the {@code --config} file, then the
 * command's defaults in {@code conf/<command>.json} (bundled in the jar). One key per option everywhere: its long
 * name without the dashes.
 */
public final class LayeredDefaults implements CommandLine.IDefaultValueProvider {
    /** Options that are not settings. */
    private static final Set<String> NOT_SETTINGS = Set.of("config", "help", "version");

    private final String envPrefix;
    private final Map<String, String> env;
    private final JsonObject file;
    private final JsonObject builtIn;

    private LayeredDefaults(String envPrefix, Map<String, String> env, JsonObject file, JsonObject builtIn) {
        this.envPrefix = envPrefix;
        this.env = env;
        this.file = file;
        this.builtIn = builtIn;
    }

    /**
     * Gives subcommand {@code name} of {@code root} its defaults: env names start with {@code envPrefix}, the built-in
     * defaults are {@code conf/<confName>.json}, and the config file is the {@code --config} among the arguments that
     * follow the subcommand's name in {@code args}, else env {@code <envPrefix>CONFIG}.
     *
     * @throws IllegalArgumentException when the config file cannot be read or names a setting the command lacks
     */
    public static void install(
            CommandLine root, String name, String confName, String envPrefix, String[] args, Map<String, String> env) {
        CommandLine command = root.getSubcommands().get(name);
        String conf = "conf/" + confName + ".json";
        JsonObject builtIn = readJson(conf, resource("/" + conf));
        String configFile = configArgument(name, args);
        if (configFile == null) {
            configFile = env.get(envPrefix + "CONFIG");
        }
        JsonObject file = null;
        if (configFile != null && !configFile.isBlank()) {
            try {
                file = readJson(configFile, Files.readString(Path.of(configFile), StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read config file " + configFile + ": " + e);
            }
            checkKeys(command, configFile, file);
        }
        checkKeys(command, conf, builtIn);
        nameEnvironment(command, envPrefix);
        command.setDefaultValueProvider(new LayeredDefaults(envPrefix, env, file, builtIn));
    }

    /** The placeholder a shared option (a mixin's) writes where its command's env prefix goes in its help. */
    static final String PREFIX_PLACEHOLDER = "<PREFIX>";

    /** Writes the command's env prefix into the help of options shared between commands. */
    private static void nameEnvironment(CommandLine command, String envPrefix) {
        for (OptionSpec o : List.copyOf(command.getCommandSpec().options())) {
            // The builder's text is the raw one: ${DEFAULT-VALUE} is resolved later, by the provider set below.
            OptionSpec.Builder raw = o.toBuilder();
            String[] description = raw.description();
            if (Arrays.stream(description).noneMatch(d -> d.contains(PREFIX_PLACEHOLDER))) {
                continue;
            }
            String[] named = Arrays.stream(description)
                    .map(d -> d.replace(PREFIX_PLACEHOLDER, envPrefix))
                    .toArray(String[]::new);
            command.getCommandSpec().remove(o);
            command.getCommandSpec().addOption(raw.description(named).build());
        }
    }

    /** The environment variable of an option: {@code --ingest-threads} is {@code KVINDEXER_INGEST_THREADS}. */
    public static String envName(String envPrefix, OptionSpec option) {
        return envPrefix + key(option).toUpperCase(Locale.ROOT).replace('-', '_');
    }

    @Override
    public String defaultValue(ArgSpec arg) {
        if (!(arg instanceof OptionSpec option) || NOT_SETTINGS.contains(key(option))) {
            return null;
        }
        String fromEnv = env.get(envName(envPrefix, option));
        if (fromEnv != null) {
            return fromEnv;
        }
        String fromFile = file == null ? null : text(file.getValue(key(option)));
        return fromFile != null ? fromFile : text(builtIn.getValue(key(option)));
    }

    private static String key(OptionSpec option) {
        return option.longestName().replaceFirst("^--", "");
    }

    /** JSON values as the command line would spell them; lists become comma-separated, null means not set. */
    private static String text(Object value) {
        if (value == null) {
            return null;
        }
        if (value instanceof JsonArray list) {
            return list.stream().map(String::valueOf).collect(Collectors.joining(","));
        }
        return value.toString();
    }

    private static void checkKeys(CommandLine command, String source, JsonObject settings) {
        Set<String> known = new TreeSet<>();
        for (OptionSpec o : command.getCommandSpec().options()) {
            known.add(key(o));
        }
        known.removeAll(NOT_SETTINGS);
        for (String k : settings.fieldNames()) {
            if (!known.contains(k)) {
                throw new IllegalArgumentException(source + ": unknown setting `" + k + "`; the settings of "
                        + command.getCommandName() + " are " + known);
            }
            Object v = settings.getValue(k);
            if (v instanceof JsonObject) {
                throw new IllegalArgumentException(
                        source + ": setting `" + k + "` must be a string, number, boolean, " + "list or null");
            }
        }
    }

    private static String configArgument(String name, String[] args) {
        boolean inCommand = false;
        for (int i = 0; i < args.length; i++) {
            if (!inCommand) {
                inCommand = args[i].equals(name);
            } else if (args[i].equals("--config") && i + 1 < args.length) {
                return args[i + 1];
            } else if (args[i].startsWith("--config=")) {
                return args[i].substring("--config=".length());
            }
        }
        return null;
    }

    private static JsonObject readJson(String source, String text) {
        try {
            return new JsonObject(text);
        } catch (DecodeException | ClassCastException e) {
            throw new IllegalArgumentException(source + " is not a JSON object: " + e.getMessage());
        }
    }

    private static String resource(String path) {
        try (InputStream in = LayeredDefaults.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
