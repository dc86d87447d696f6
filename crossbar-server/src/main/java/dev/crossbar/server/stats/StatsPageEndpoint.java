package dev.crossbar.server.stats;

import dev.crossbar.server.http.HttpEndpoint;
import dev.crossbar.server.http.HttpResponses;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code /stats}: the human-readable statistics page, one self-contained HTML file (no CDN: lab
 * networks are often closed) that reads {@code /ws} beside it, whether opened as {@code /stats} or
 * {@code /stats/}; it groups topics by routing rule, with a search box and a filter, and shows the
 * 1:1 sessions.
 *
 * <p>The page never puts client strings into HTML; as a second line of defence it is served with
 * a Content-Security-Policy that allows only its own inline script and style (by hash), no other
 * script, image or frame, and connections only back to the relay. Stateless: one instance serves
 * every channel.
 */
public final class StatsPageEndpoint implements HttpEndpoint {

    public static final String PATH = "/stats";

    private static final String RESOURCE = "stats.html";
    private static final Pattern SCRIPT = Pattern.compile("<script>(.*?)</script>", Pattern.DOTALL);
    private static final Pattern STYLE = Pattern.compile("<style>(.*?)</style>", Pattern.DOTALL);

    /** Declared after the patterns it needs: static fields initialise in order. */
    public static final StatsPageEndpoint INSTANCE = new StatsPageEndpoint();

    private final byte[] page;
    private final HttpHeaders headers;

    private StatsPageEndpoint() {
        String html = load();
        page = html.getBytes(StandardCharsets.UTF_8);
        headers = new DefaultHttpHeaders()
                .set("Content-Security-Policy", "default-src 'none'; script-src " + hash(SCRIPT, html)
                        + "; style-src " + hash(STYLE, html) + "; connect-src 'self'; base-uri 'none'; form-action 'none'; "
                        + "frame-ancestors 'none'")
                .set("X-Content-Type-Options", "nosniff")
                .set("Referrer-Policy", "no-referrer");
    }

    @Override
    public void handle(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (!HttpMethod.GET.equals(request.method())) {
            HttpResponses.send(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
                    Unpooled.copiedBuffer("405 Method Not Allowed: /stats answers GET\n", StandardCharsets.UTF_8),
                    new DefaultHttpHeaders().set(HttpHeaderNames.ALLOW, HttpMethod.GET.name()));
            return;
        }
        // Wrapping the shared array costs no copy; the buffer is unpooled heap, so releasing it frees nothing shared.
        HttpResponses.send(ctx, HttpResponseStatus.OK, "text/html; charset=utf-8", Unpooled.wrappedBuffer(page), headers);
    }

    private static String load() {
        try (InputStream in = StatsPageEndpoint.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + RESOURCE + " next to " + StatsPageEndpoint.class);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The CSP source for the page's one inline block of this kind: {@code 'sha256-...'}. */
    private static String hash(Pattern block, String html) {
        Matcher m = block.matcher(html);
        if (!m.find()) {
            throw new IllegalStateException("stats page has no " + block.pattern());
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(m.group(1).getBytes(StandardCharsets.UTF_8));
            return "'sha256-" + Base64.getEncoder().encodeToString(digest) + "'";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
