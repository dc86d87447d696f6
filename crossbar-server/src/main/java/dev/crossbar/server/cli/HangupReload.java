package dev.crossbar.server.cli;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SIGHUP reloads the configuration and the TLS certificate, as it does for nginx and HAProxy: an
 * operator edits the configuration file, or a certificate renewal hook says "now" instead of
 * waiting for the next file check.
 *
 * <p>{@code sun.misc.Signal} (module jdk.unsupported) is the only way a Java program can handle a
 * signal. It is reached by reflection so that the build stays free of the compiler's
 * proprietary-API warnings, which cannot be suppressed. Where the JVM will not allow it (e.g.
 * {@code -Xrs}, or a JDK without it) the certificate is still reloaded when its files change; a
 * process that was started with SIGHUP ignored (nohup) keeps it ignored, and the log says so.
 */
final class HangupReload {

    private static final Logger log = LoggerFactory.getLogger(HangupReload.class);

    private HangupReload() {
    }

    /** Returns whether the handler was installed. */
    static boolean install(Runnable reload) {
        try {
            Class<?> signalClass = Class.forName("sun.misc.Signal");
            Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
            Object hup = signalClass.getConstructor(String.class).newInstance("HUP");
            Object handler = Proxy.newProxyInstance(handlerClass.getClassLoader(), new Class<?>[] {handlerClass},
                    (proxy, method, args) -> {
                        if (method.getDeclaringClass() == Object.class) {
                            return objectMethod(proxy, method, args);
                        }
                        // Runs on the JVM's signal thread; the reload is quick and synchronised.
                        log.info("SIGHUP: reloading the configuration and the TLS certificate");
                        reload.run();
                        return null;
                    });
            Object before = signalClass.getMethod("handle", signalClass, handlerClass).invoke(null, hup, handler);
            if (before == handlerClass.getField("SIG_IGN").get(null)) {
                // A process started with SIGHUP ignored (nohup, some supervisors) keeps it ignored:
                // the JVM installs no handler, and a reload asked for by signal would do nothing.
                log.warn("SIGHUP is ignored by this process (started under nohup?), so it reloads nothing; "
                        + "use POST /admin/reload; the certificate is still reloaded when its files change");
                return false;
            }
            return true;
        } catch (InvocationTargetException e) {
            log.warn("SIGHUP reload unavailable ({}); use POST /admin/reload; the certificate is still reloaded "
                    + "when its files change", e.getCause() == null ? e.toString() : e.getCause().getMessage());
        } catch (ReflectiveOperationException | RuntimeException e) {
            log.warn("SIGHUP reload unavailable ({}); use POST /admin/reload; the certificate is still reloaded "
                    + "when its files change", e.toString());
        }
        return false;
    }

    private static Object objectMethod(Object proxy, Method method, Object[] args) {
        return switch (method.getName()) {
            case "equals" -> proxy == args[0];
            case "hashCode" -> System.identityHashCode(proxy);
            default -> "HangupReload";
        };
    }
}
