import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;

/**
 * The line protocol every sandbox client speaks (SandboxConsumer, SandboxShareConsumer, SandboxStreamsApp):
 * key=value arguments, one command per line on stdin, one JSON event per line on stdout.
 */
final class SandboxLines {
    private SandboxLines() {
    }

    /** The key=value command-line arguments. */
    static Map<String, String> arguments(String[] argv) {
        Map<String, String> args = new HashMap<>();
        for (String arg : argv) {
            int eq = arg.indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException("arguments are key=value, got " + arg);
            }
            args.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        return args;
    }

    static String required(Map<String, String> args, String key) {
        String value = args.get(key);
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("missing argument " + key + "=...");
        }
        return value;
    }

    /** One event: {"event": event, ...body}, body being JSON members (possibly none). */
    static synchronized void print(String event, String body) {
        System.out.println("{\"event\":\"" + event + "\"" + (body.isEmpty() ? "" : "," + body) + "}");
        System.out.flush();
    }

    /** Every stdin line into `commands`, then "exit" when stdin closes (the parent went away). */
    static void readCommands(Queue<String> commands) {
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    commands.add(line.trim());
                }
            } catch (Exception e) {
                // stdin closed: treated as exit below
            }
            commands.add("exit");
        });
        reader.setDaemon(true);
        reader.start();
    }
}
