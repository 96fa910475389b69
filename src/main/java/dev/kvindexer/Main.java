package dev.kvindexer;

import dev.kvindexer.cli.FatalErrors;
import dev.kvindexer.cli.LayeredDefaults;
import dev.kvindexer.cli.SelectServiceCommand;
import dev.kvindexer.cli.ServeCommand;
import dev.kvindexer.cli.SimulateCommand;
import dev.kvindexer.cli.SlotTrackerCommand;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point: {@code java -jar kvindexer.jar <command>}. */
@Command(
        name = "kvindexer",
        mixinStandardHelpOptions = true,
        version = "kvindexer 0.1.0",
        description = "KV-cache indexer for LLM routers (Dynamo and Mooncake compatible).",
        subcommands = {
            ServeCommand.class,
            SlotTrackerCommand.class,
            SelectServiceCommand.class,
            SimulateCommand.class,
            CommandLine.HelpCommand.class
        })
public final class Main {
    /** Env prefixes of the commands' settings. */
    public static final String SERVE_ENV = "KVINDEXER_";

    public static final String SLOT_TRACKER_ENV = "KVINDEXER_SLOT_TRACKER_";
    public static final String SELECT_SERVICE_ENV = "KVINDEXER_SELECT_SERVICE_";

    public static void main(String[] args) {
        FatalErrors.install();
        CommandLine commandLine;
        try {
            commandLine = commandLine(args, System.getenv());
        } catch (IllegalArgumentException e) {
            System.err.println("kvindexer: " + e.getMessage());
            System.exit(2);
            return;
        }
        int code = commandLine.execute(args);
        if (code != 0) {
            System.exit(code);
        }
    }

    /**
     * The commands, each option's value taken from the flag, else env, else the --config file, else conf/*.json.
     *
     * @throws IllegalArgumentException when a config file cannot be read or names an unknown setting
     */
    public static CommandLine commandLine(String[] args, Map<String, String> env) {
        CommandLine root = new CommandLine(new Main());
        LayeredDefaults.install(root, "serve", "kvindexer", SERVE_ENV, args, env);
        LayeredDefaults.install(root, "slot-tracker", "slot-tracker", SLOT_TRACKER_ENV, args, env);
        LayeredDefaults.install(root, "select-service", "select-service", SELECT_SERVICE_ENV, args, env);
        return root;
    }
}
