package dev.kvindexer;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The package structure docs/architecture.md's "Layers" section draws: packages form layers, every dependency points down, no
 * package cycle, and the protocol and index core stay free of Vert.x so they can be tested and benchmarked alone.
 */
class ArchitectureTest {
    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.kvindexer");
    }

    /** Every package is a slice of its own, sub-packages included: a cycle between any two fails. */
    @Test
    void noPackageCycles() {
        slices().matching("dev.kvindexer.(**)").should().beFreeOfCycles().check(classes);
    }

    @Test
    void layersOnlyReachDown() {
        layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                .layer("Launch")
                .definedBy("dev.kvindexer")
                .layer("Cli")
                .definedBy("dev.kvindexer.cli..")
                .layer("Node")
                .definedBy("dev.kvindexer.node..")
                .layer("Conductor")
                .definedBy("dev.kvindexer.conductor..")
                .layer("Http")
                .definedBy("dev.kvindexer.http..")
                .layer("Tracker")
                .definedBy("dev.kvindexer.tracker..")
                .layer("Grpc")
                .definedBy("dev.kvindexer.grpc..")
                .layer("SelectService")
                .definedBy("dev.kvindexer.selectservice")
                .layer("Replication")
                .definedBy("dev.kvindexer.selectservice.replication..")
                .layer("Query")
                .definedBy("dev.kvindexer.query..")
                .layer("Select")
                .definedBy("dev.kvindexer.select")
                .layer("Load")
                .definedBy("dev.kvindexer.load..")
                .layer("Cluster")
                .definedBy("dev.kvindexer.cluster..")
                .layer("Recovery")
                .definedBy("dev.kvindexer.recovery..")
                .layer("Registry")
                .definedBy("dev.kvindexer.registry..")
                .layer("Ingest")
                .definedBy("dev.kvindexer.ingest..")
                .layer("Partition")
                .definedBy("dev.kvindexer.partition..")
                .layer("Simulator")
                .definedBy("dev.kvindexer.sim..")
                .layer("Web")
                .definedBy("dev.kvindexer.web..")
                .layer("Dump")
                .definedBy("dev.kvindexer.dump..")
                .layer("Wire")
                .definedBy("dev.kvindexer.wire..")
                .layer("Index")
                .definedBy("dev.kvindexer.index..")
                .layer("Vocabulary")
                .definedBy("dev.kvindexer.event..", "dev.kvindexer.hash..")
                .layer("Support")
                .definedBy(
                        "dev.kvindexer.config..",
                        "dev.kvindexer.metrics..",
                        "dev.kvindexer.net..",
                        "dev.kvindexer.zmq..")
                .whereLayer("Cli")
                .mayOnlyBeAccessedByLayers("Launch")
                .whereLayer("Node")
                .mayOnlyBeAccessedByLayers("Cli")
                .whereLayer("Tracker")
                .mayOnlyBeAccessedByLayers("Cli")
                .whereLayer("Grpc")
                .mayOnlyBeAccessedByLayers("Cli", "Node")
                .whereLayer("Grpc")
                .mayOnlyAccessLayers("Web", "Support")
                .whereLayer("SelectService")
                .mayOnlyBeAccessedByLayers("Cli", "Node")
                .whereLayer("Replication")
                .mayOnlyBeAccessedByLayers("SelectService", "Tracker")
                .whereLayer("Replication")
                .mayOnlyAccessLayers("Select", "Load", "Cluster", "Web", "Vocabulary", "Support")
                .whereLayer("Select")
                .mayOnlyBeAccessedByLayers("Cli", "SelectService", "Replication")
                .whereLayer("Select")
                .mayOnlyAccessLayers("Load", "Index", "Vocabulary", "Support")
                .whereLayer("Load")
                .mayOnlyBeAccessedByLayers("Tracker", "Select", "SelectService", "Replication")
                .whereLayer("Load")
                .mayOnlyAccessLayers("Vocabulary")
                .whereLayer("Query")
                .mayOnlyBeAccessedByLayers("Node", "Http")
                .whereLayer("Simulator")
                .mayOnlyBeAccessedByLayers("Cli")
                .whereLayer("Http")
                .mayOnlyBeAccessedByLayers("Node", "Conductor")
                .whereLayer("Cluster")
                .mayOnlyBeAccessedByLayers("Node", "Http", "SelectService", "Replication")
                .whereLayer("Recovery")
                .mayOnlyBeAccessedByLayers("Node", "Cluster")
                .whereLayer("Registry")
                .mayOnlyBeAccessedByLayers("Node", "Http", "Query", "Cluster", "Recovery", "SelectService")
                .whereLayer("Ingest")
                .mayOnlyBeAccessedByLayers("Node", "Http", "Conductor", "Cluster", "Registry")
                .whereLayer("Conductor")
                .mayOnlyBeAccessedByLayers("Node")
                .whereLayer("Partition")
                .mayOnlyBeAccessedByLayers(
                        "Node", "Http", "Query", "Cluster", "Recovery", "Registry", "Ingest", "SelectService")
                .whereLayer("Dump")
                .mayOnlyBeAccessedByLayers("Http", "Cluster", "Recovery", "Partition")
                .whereLayer("Dump")
                .mayOnlyAccessLayers("Index", "Vocabulary", "Support")
                .whereLayer("Wire")
                .mayOnlyBeAccessedByLayers("Http", "Conductor", "Registry", "Ingest", "Simulator")
                .whereLayer("Index")
                .mayOnlyBeAccessedByLayers(
                        "Http", "Query", "Cluster", "Dump", "Partition", "Conductor", "Select", "SelectService")
                .whereLayer("Web")
                .mayOnlyBeAccessedByLayers(
                        "Cli", "Node", "Http", "Conductor", "Tracker", "Grpc", "SelectService", "Replication")
                .whereLayer("Web")
                .mayOnlyAccessLayers("Vocabulary", "Support")
                .whereLayer("Vocabulary")
                .mayNotAccessAnyLayer()
                .whereLayer("Support")
                .mayOnlyAccessLayers("Vocabulary")
                .check(classes);
    }

    /** A partition is reached through its handle: its state and actor are the partition package's own. */
    @Test
    void onlyThePartitionPackageTouchesAPartitionsState() {
        noClasses()
                .that()
                .resideOutsideOfPackage("dev.kvindexer.partition..")
                .should()
                .dependOnClassesThat()
                .haveFullyQualifiedName("dev.kvindexer.partition.Partition")
                .check(classes);
    }

    @Test
    void protocolAndIndexCoreKnowNoVertx() {
        noClasses()
                .that()
                .resideInAnyPackage(
                        "dev.kvindexer.index..",
                        "dev.kvindexer.hash..",
                        "dev.kvindexer.wire..",
                        "dev.kvindexer.event..",
                        "dev.kvindexer.conductor.wire..",
                        "dev.kvindexer.conductor.event..",
                        "dev.kvindexer.select",
                        "dev.kvindexer.load..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.vertx..")
                .check(classes);
    }
}
