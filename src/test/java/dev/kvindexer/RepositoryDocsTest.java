package dev.kvindexer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The repository stands alone: every relative link in its Markdown (README, docs/, the other top-level documents)
 * reaches a file inside it, and a heading there when it names one; so does every {@code docs/<file>.md#<heading>}
 * that code, configuration and manifests name; no source file points outside it.
 */
class RepositoryDocsTest {
    private static final Path ROOT = Path.of("").toAbsolutePath();
    private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.+?)\\s*#*\\s*$");
    private static final Pattern FENCE = Pattern.compile("^\\s*(```|~~~)");
    /** A heading of the documentation as code comments, configuration and manifests name it. */
    private static final Pattern DOC_ANCHOR = Pattern.compile("\\b(docs/[A-Za-z0-9_/.-]+\\.md)#([A-Za-z0-9_-]+)");

    private static List<Path> markdown() throws IOException {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> top = Files.list(ROOT)) {
            top.filter(p -> p.toString().endsWith(".md")).forEach(files::add);
        }
        for (String dir : List.of("docs", "deploy")) {
            try (Stream<Path> tree = Files.walk(ROOT.resolve(dir))) {
                tree.filter(p -> p.toString().endsWith(".md")).forEach(files::add);
            }
        }
        return files;
    }

    /** The lines of a Markdown file outside code fences, where links and headings live. */
    private static List<String> prose(Path file) throws IOException {
        List<String> out = new ArrayList<>();
        boolean fenced = false;
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (FENCE.matcher(line).find()) {
                fenced = !fenced;
            } else if (!fenced) {
                out.add(line);
            }
        }
        return out;
    }

    /** The anchors a heading gets where the repository is rendered: lower case, punctuation dropped, dashes. */
    static Set<String> anchors(Path file) throws IOException {
        Set<String> out = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : prose(file)) {
            Matcher h = HEADING.matcher(line);
            if (h.matches()) {
                String slug = h.group(1)
                        .toLowerCase(Locale.ROOT)
                        .replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1")
                        .replaceAll("[^\\p{L}\\p{N} _-]", "")
                        .replace(' ', '-');
                int n = seen.merge(slug, 1, Integer::sum);
                out.add(n == 1 ? slug : slug + "-" + (n - 1));
            }
        }
        return out;
    }

    @Test
    void everyRelativeLinkReachesAFileAndHeadingInsideTheRepository() throws IOException {
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path file : markdown()) {
            for (String line : prose(file)) {
                Matcher m = LINK.matcher(line.replaceAll("`[^`]*`", ""));
                while (m.find()) {
                    String target = m.group(1);
                    if (target.matches("^[a-z][a-z0-9+.-]*:.*")) {
                        continue; // http:, https:, mailto:
                    }
                    checked++;
                    int hash = target.indexOf('#');
                    String path = hash < 0 ? target : target.substring(0, hash);
                    String anchor = hash < 0 ? null : target.substring(hash + 1);
                    Path resolved = (path.isEmpty() ? file : file.getParent().resolve(path)).normalize();
                    String where = ROOT.relativize(file) + ": " + target;
                    if (!resolved.startsWith(ROOT)) {
                        broken.add(where + " (outside the repository)");
                    } else if (!Files.exists(resolved)) {
                        broken.add(where + " (no such file)");
                    } else if (anchor != null
                            && resolved.toString().endsWith(".md")
                            && !anchors(resolved).contains(anchor)) {
                        broken.add(where + " (no such heading)");
                    }
                }
            }
        }
        assertTrue(checked > 50, "the links were found: " + checked);
        assertEquals(List.of(), broken);
    }

    @Test
    void everyDocumentationHeadingTheCodeAndManifestsNameExists() throws IOException {
        List<String> broken = new ArrayList<>();
        Map<Path, Set<String>> headings = new HashMap<>();
        int checked = 0;
        for (String dir : List.of("src", "deploy", "conf")) {
            try (Stream<Path> tree = Files.walk(ROOT.resolve(dir))) {
                for (Path p : tree.filter(Files::isRegularFile).toList()) {
                    String text = new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
                    Matcher m = DOC_ANCHOR.matcher(text);
                    while (m.find()) {
                        checked++;
                        Path doc = ROOT.resolve(m.group(1));
                        String where = ROOT.relativize(p) + ": " + m.group();
                        if (!Files.exists(doc)) {
                            broken.add(where + " (no such file)");
                        } else if (!headings.computeIfAbsent(doc, RepositoryDocsTest::anchorsOrNone)
                                .contains(m.group(2))) {
                            broken.add(where + " (no such heading)");
                        }
                    }
                }
            }
        }
        assertTrue(checked > 50, "the references were found: " + checked);
        assertEquals(List.of(), broken);
    }

    private static Set<String> anchorsOrNone(Path file) {
        try {
            return anchors(file);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void noSourceFileNamesAPlaceOutsideTheRepository() throws IOException {
        // Spelled in pieces so that this file does not name them itself.
        List<String> outside = List.of(".." + "/shared", "SPEC " + '\u00a7');
        List<String> found = new ArrayList<>();
        try (Stream<Path> tree = Files.walk(ROOT.resolve("src"))) {
            for (Path p : tree.filter(Files::isRegularFile).toList()) {
                String text = new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
                outside.stream().filter(text::contains).forEach(o -> found.add(ROOT.relativize(p) + " names " + o));
            }
        }
        assertEquals(List.of(), found);
    }

    @Test
    void anchorsFollowTheRenderedHeadings() throws IOException {
        Path sample = Files.createTempFile("anchors", ".md");
        try {
            Files.writeString(
                    sample,
                    "# C++ Conductor events\n## `GET /services`\n```\n# not a heading\n```\n## Step 1\n## Step 1\n");
            assertEquals(Set.of("c-conductor-events", "get-services", "step-1", "step-1-1"), anchors(sample));
        } finally {
            Files.delete(sample);
        }
    }
}
