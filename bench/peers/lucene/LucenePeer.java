/*
 * Java peer of luntan-index and luntan-search: Apache Lucene with its Chinese
 * analyzer (SmartChineseAnalyzer, lucene-analyzers-smartcn) over the same
 * thread XML files, the twin of bench/peers/whoosh_peer.py.
 *
 * Built by bench/bench.sh against Debian's liblucene8-java jars
 * (/usr/share/java/lucene-*.jar): no build tool, one javac.
 *
 *   LucenePeer index FILE_LIST INDEX_DIR RAM_MB
 *       Parse every XML file of FILE_LIST (one path a line) and add one
 *       document per thread: key, site, board, url indexed as single terms
 *       and stored, forum stored only; title and body analyzed with
 *       SmartChineseAnalyzer and stored (body's postings carry offsets, so
 *       the UnifiedHighlighter reads the matches from the index instead of
 *       re-analysing each hit). One IndexWriter with a RAM_MB buffer, one
 *       commit at the end. Prints one JSON line: threads, bytes (XML read),
 *       secs.
 *
 *   LucenePeer search INDEX_DIR QUERIES_FILE LIMIT [--startup-only] [--warm N]
 *       Open the index (a searcher, the analyzer's dictionaries loaded),
 *       then run every query of QUERIES_FILE once: parse over title and
 *       body (all words must match, like luntan; the classic query syntax
 *       reads luntan's "phrase", a OR b and -word as they are; a word the
 *       analyzer splits into pieces is a phrase of them), count every
 *       match exactly (as luntan and the Whoosh peer do), take LIMIT hits
 *       with their stored title/url and a highlighted body snippet
 *       (UnifiedHighlighter, one passage of about 80 characters). Prints one
 *       JSON line: startup_ms (JVM start to a searcher ready), elapsed_ms
 *       (every pass, the searcher ready to the last snippet) and per query
 *       total, returned, search_ms (without snippets), ms (with), snippets.
 *       With --warm N the JVM then runs the queries N times more and adds
 *       the last of these passes as "warm" (the JIT has compiled Lucene's
 *       code by then, as in a long-running server).
 *
 *   LucenePeer version
 *       Prints the Lucene version (org.apache.lucene.util.Version.LATEST)
 *       and the JVM's.
 */

import java.io.ByteArrayInputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.text.BreakIterator;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLStreamConstants;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.cn.smart.SmartChineseAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.queryparser.classic.MultiFieldQueryParser;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TopScoreDocCollector;
import org.apache.lucene.search.uhighlight.LengthGoalBreakIterator;
import org.apache.lucene.search.uhighlight.UnifiedHighlighter;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.Version;

public final class LucenePeer {
    private LucenePeer() {}

    /** title and body: analyzed, stored; body's postings also carry offsets. */
    private static final FieldType BODY = new FieldType(TextField.TYPE_STORED);

    static {
        BODY.setIndexOptions(IndexOptions.DOCS_AND_FREQS_AND_POSITIONS_AND_OFFSETS);
        BODY.freeze();
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            die("usage: LucenePeer index FILE_LIST INDEX_DIR RAM_MB | search INDEX_DIR QUERIES_FILE LIMIT | version");
        }
        switch (args[0]) {
            case "index":
                index(Paths.get(args[1]), Paths.get(args[2]), Integer.parseInt(args[3]));
                break;
            case "search":
                boolean startupOnly = false;
                int warm = 0;
                for (int i = 4; i < args.length; i++) {
                    if ("--startup-only".equals(args[i])) {
                        startupOnly = true;
                    } else if ("--warm".equals(args[i]) && i + 1 < args.length) {
                        warm = Integer.parseInt(args[++i]);
                    } else {
                        die("unknown search option " + args[i]);
                    }
                }
                search(Paths.get(args[1]), Paths.get(args[2]), Integer.parseInt(args[3]), startupOnly, warm);
                break;
            case "version":
                OUT.println("Lucene " + Version.LATEST + "; Java " + System.getProperty("java.vm.name") + " "
                        + System.getProperty("java.runtime.version"));
                break;
            default:
                die("unknown command " + args[0]);
        }
    }

    /** Standard output in UTF-8 whatever the locale (the queries are Chinese). */
    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    /** The stored fields a hit row shows, as the Whoosh peer's (title, url). */
    private static final Set<String> FIELDS = Set.of("title", "url");

    private static void die(String msg) {
        System.err.println(msg);
        System.exit(2);
    }

    // --- index -------------------------------------------------------------------

    /** One thread XML file, as whoosh_peer.py's read_thread reads it. */
    static final class ThreadDoc {
        String site = "", board = "", id = "", url = "", forum = "", title = "";
        final StringBuilder body = new StringBuilder();
    }

    private static final XMLInputFactory XML = XMLInputFactory.newInstance();

    static {
        XML.setProperty(XMLInputFactory.IS_COALESCING, Boolean.TRUE);
        XML.setProperty(XMLInputFactory.SUPPORT_DTD, Boolean.FALSE);
        XML.setProperty(XMLInputFactory.IS_SUPPORTING_EXTERNAL_ENTITIES, Boolean.FALSE);
    }

    /**
     * The thread's attributes, its url/forum/title children, and its body:
     * each post's paragraphs joined by a newline, posts with text joined by
     * an empty line.
     */
    static ThreadDoc readThread(byte[] data) throws XMLStreamException {
        ThreadDoc t = new ThreadDoc();
        XMLStreamReader r = XML.createXMLStreamReader(new ByteArrayInputStream(data));
        int depth = 0;
        String child = null; // the depth-2 element being read (url, forum, title)
        StringBuilder text = new StringBuilder();
        StringBuilder post = null; // the current post's paragraphs
        boolean inP = false;
        int paragraphs = 0;
        while (r.hasNext()) {
            int ev = r.next();
            if (ev == XMLStreamConstants.START_ELEMENT) {
                depth++;
                String name = r.getLocalName();
                if (depth == 1) {
                    t.site = attr(r, "site");
                    t.board = attr(r, "board");
                    t.id = attr(r, "id");
                } else if (depth == 2) {
                    if (name.equals("post")) {
                        post = new StringBuilder();
                        paragraphs = 0;
                    } else if (name.equals("url") || name.equals("forum") || name.equals("title")) {
                        child = name;
                        text.setLength(0);
                    }
                } else if (depth == 3 && post != null && name.equals("p")) {
                    if (paragraphs++ > 0) {
                        post.append('\n');
                    }
                    inP = true;
                }
            } else if (ev == XMLStreamConstants.CHARACTERS || ev == XMLStreamConstants.CDATA) {
                if (inP) {
                    post.append(r.getTextCharacters(), r.getTextStart(), r.getTextLength());
                } else if (child != null && depth == 2) {
                    text.append(r.getTextCharacters(), r.getTextStart(), r.getTextLength());
                }
            } else if (ev == XMLStreamConstants.END_ELEMENT) {
                if (depth == 3 && inP) {
                    inP = false;
                } else if (depth == 2 && post != null) {
                    if (!post.toString().isBlank()) {
                        if (t.body.length() > 0) {
                            t.body.append("\n\n");
                        }
                        t.body.append(post);
                    }
                    post = null;
                } else if (depth == 2 && child != null) {
                    String v = text.toString();
                    switch (child) {
                        case "url": t.url = v; break;
                        case "forum": t.forum = v; break;
                        default: t.title = v; break;
                    }
                    child = null;
                }
                depth--;
            }
        }
        r.close();
        return t;
    }

    private static String attr(XMLStreamReader r, String name) {
        String v = r.getAttributeValue(null, name);
        return v == null ? "" : v;
    }

    static void index(Path fileList, Path indexDir, int ramMb) throws Exception {
        List<String> paths = new ArrayList<>();
        for (String line : Files.readAllLines(fileList, StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                paths.add(line.strip());
            }
        }
        long started = System.nanoTime();
        Analyzer analyzer = new SmartChineseAnalyzer();
        IndexWriterConfig cfg = new IndexWriterConfig(analyzer)
                .setOpenMode(IndexWriterConfig.OpenMode.CREATE)
                .setRAMBufferSizeMB(ramMb)
                .setCommitOnClose(false);
        Files.createDirectories(indexDir);
        long bytes = 0;
        int threads = 0;
        try (FSDirectory dir = FSDirectory.open(indexDir); IndexWriter w = new IndexWriter(dir, cfg)) {
            for (String p : paths) {
                byte[] data = Files.readAllBytes(Paths.get(p));
                ThreadDoc t = readThread(data);
                Document d = new Document();
                d.add(new StringField("key", t.site + "/" + t.id, Field.Store.YES));
                d.add(new StringField("site", t.site, Field.Store.YES));
                d.add(new StringField("board", t.board, Field.Store.YES));
                d.add(new StringField("url", t.url, Field.Store.YES));
                d.add(new StoredField("forum", t.forum));
                d.add(new Field("title", t.title, TextField.TYPE_STORED));
                d.add(new Field("body", t.body.toString(), BODY));
                w.addDocument(d);
                bytes += data.length;
                threads++;
            }
            w.commit();
        }
        double secs = (System.nanoTime() - started) / 1e9;
        OUT.println("{\"threads\": " + threads + ", \"bytes\": " + bytes + ", \"secs\": " + secs + "}");
    }

    // --- search ------------------------------------------------------------------

    static void search(Path indexDir, Path queriesFile, int limit, boolean startupOnly, int warmPasses) throws Exception {
        List<String> queries = new ArrayList<>();
        for (String line : Files.readAllLines(queriesFile, StandardCharsets.UTF_8)) {
            String q = line.strip();
            if (!q.isEmpty() && !line.startsWith("#")) {
                queries.add(q);
            }
        }
        Analyzer analyzer = new SmartChineseAnalyzer();
        DirectoryReader reader = DirectoryReader.open(FSDirectory.open(indexDir));
        IndexSearcher searcher = new IndexSearcher(reader);
        MultiFieldQueryParser parser = new MultiFieldQueryParser(new String[] {"title", "body"}, analyzer);
        parser.setDefaultOperator(QueryParser.Operator.AND);
        // A word the analyzer splits (携程 -> 携 程, 当当 -> 当 当) must match as
        // a phrase, as luntan matches it as a substring; without this the
        // multi-field parser would OR its pieces. (Lucene allows that only
        // when the query is split on whitespace before analysis: luntan's
        // words are separated by spaces too.)
        parser.setSplitOnWhitespace(true);
        parser.setAutoGeneratePhraseQueries(true);
        UnifiedHighlighter hl = new UnifiedHighlighter(searcher, analyzer);
        // One passage of about 80 characters around the best match (the
        // Whoosh peer's fragments are 80 characters), from the whole body.
        hl.setBreakIterator(() -> LengthGoalBreakIterator.createClosestToLength(
                BreakIterator.getSentenceInstance(Locale.ROOT), 80, 0.5f));
        hl.setMaxLength(Integer.MAX_VALUE - 1);
        // Load the analyzer's dictionaries (lazily loaded) before the clock
        // of the first query starts, as the Whoosh peer does with jieba's.
        parser.parse("酒店");
        double startupMs = ManagementFactory.getRuntimeMXBean().getUptime();
        long ready = System.nanoTime();
        StringBuilder out = new StringBuilder();
        out.append("{\"startup_ms\": ").append(startupMs).append(", \"queries\": [");
        if (!startupOnly) {
            pass(queries, parser, searcher, hl, limit, out);
        }
        out.append("]");
        if (!startupOnly && warmPasses > 0) {
            // The same queries again in the same JVM, the last of warmPasses
            // passes reported: Lucene as a long-running server answers them,
            // its code compiled by the JIT.
            StringBuilder warm = new StringBuilder();
            for (int i = 0; i < warmPasses; i++) {
                warm.setLength(0);
                pass(queries, parser, searcher, hl, limit, warm);
            }
            out.append(", \"warm_passes\": ").append(warmPasses).append(", \"warm\": [").append(warm).append("]");
        }
        // Every pass together, from the searcher ready to the last snippet.
        out.append(", \"elapsed_ms\": ").append((System.nanoTime() - ready) / 1e6).append("}");
        reader.close();
        OUT.println(out);
    }

    /** Runs every query once, appending one JSON object per query to out. */
    static void pass(List<String> queries, QueryParser parser, IndexSearcher searcher, UnifiedHighlighter hl, int limit,
                     StringBuilder out) throws Exception {
        boolean first = true;
        for (String q : queries) {
            long t = System.nanoTime();
            Query query = parser.parse(q);
            // Every match counted (no early termination at 1,000 hits),
            // as luntan's and Whoosh's totals are exact.
            TopScoreDocCollector c = TopScoreDocCollector.create(limit, Integer.MAX_VALUE);
            searcher.search(query, c);
            TopDocs top = c.topDocs();
            long total = top.totalHits.value;
            int returned = 0;
            for (ScoreDoc sd : top.scoreDocs) {
                Document d = searcher.doc(sd.doc, FIELDS);
                if (d.get("title") != null || d.get("url") != null) {
                    returned++;
                }
            }
            long tSearch = System.nanoTime();
            String[] snippets = hl.highlight("body", query, top, 1);
            long tDone = System.nanoTime();
            int withSnippet = 0;
            for (String s : snippets) {
                if (s != null && !s.isEmpty()) {
                    withSnippet++;
                }
            }
            if (!first) {
                out.append(", ");
            }
            first = false;
            out.append("{\"q\": ").append(json(q))
                    .append(", \"total\": ").append(total)
                    .append(", \"returned\": ").append(returned)
                    .append(", \"search_ms\": ").append((tSearch - t) / 1e6)
                    .append(", \"ms\": ").append((tDone - t) / 1e6)
                    .append(", \"snippets\": ").append(withSnippet)
                    .append("}");
        }
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            switch (ch) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (ch < 0x20) {
                        b.append(String.format("\\u%04x", (int) ch));
                    } else {
                        b.append(ch);
                    }
            }
        }
        return b.append('"').toString();
    }
}
