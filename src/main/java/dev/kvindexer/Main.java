package dev.kvindexer;

import dev.kvindexer.cli.ServeCommand;
import dev.kvindexer.cli.SimulateCommand;
import dev.kvindexer.cli.SlotTrackerCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point: {@code java -jar kvindexer.jar <command>}. */
@Command(name = "kvindexer", mixinStandardHelpOptions = true, version = "kvindexer 0.1.0",
        description = "KV-cache indexer for LLM routers (Dynamo and Mooncake compatible).",
        subcommands = {ServeCommand.class, SlotTrackerCommand.class, SimulateCommand.class, CommandLine.HelpCommand.class})
public final class Main {
    public static void main(String[] args) {
        int code = new CommandLine(new Main()).execute(args);
        if (code != 0) {
            System.exit(code);
        }
    }
}
