import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.LinkedBlockingQueue;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.ThreadMetadata;

/**
 * A real Kafka Streams app for the KRaft sandbox that joins with the streams rebalance protocol
 * ({@code group.protocol=streams}, KIP-1071), so the broker holds a streams group, driven line by
 * line on stdin.
 *
 * <p>Arguments: {@code key=value} pairs: {@code bootstrap}, {@code app} (application.id, the
 * group id), {@code input} (comma-separated topics), {@code output} (a topic; the topology is one
 * stateless subtopology: input, map, output), {@code state} (state.dir), optional {@code client}
 * (client.id).
 *
 * <p>Commands on stdin: {@code pause} (stay in the group, process and commit nothing),
 * {@code resume}, {@code exit} (close, leaving the group).
 *
 * <p>Prints one JSON line per event on stdout: {@code state} (each KafkaStreams state change),
 * {@code tasks} (the active and standby task ids this instance holds, each time they change),
 * {@code paused} (after each pause or resume, whether it is paused now),
 * {@code exit}.
 */
public final class SandboxStreamsApp {
    private final LinkedBlockingQueue<String> commands = new LinkedBlockingQueue<>();
    private final KafkaStreams streams;

    private SandboxStreamsApp(Map<String, String> args) {
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, SandboxLines.required(args, "bootstrap"));
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, SandboxLines.required(args, "app"));
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        props.put(StreamsConfig.STATE_DIR_CONFIG, SandboxLines.required(args, "state"));
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "1");
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class.getName());
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class.getName());
        props.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
        if (args.containsKey("client")) {
            props.put(StreamsConfig.CLIENT_ID_CONFIG, args.get("client"));
        }
        StreamsBuilder builder = new StreamsBuilder();
        builder.<byte[], byte[]>stream(Arrays.asList(SandboxLines.required(args, "input").split(",")))
                .mapValues(value -> value)
                .to(SandboxLines.required(args, "output"));
        streams = new KafkaStreams(builder.build(), props);
        streams.setStateListener((now, before) -> SandboxLines.print("state", "\"state\":\"" + now + "\""));
    }

    private String tasksJson() {
        List<String> active = new ArrayList<>();
        List<String> standby = new ArrayList<>();
        for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
            for (TaskMetadata task : thread.activeTasks()) {
                active.add("\"" + task.taskId() + "\"");
            }
            for (TaskMetadata task : thread.standbyTasks()) {
                standby.add("\"" + task.taskId() + "\"");
            }
        }
        active.sort(null);
        standby.sort(null);
        return "\"active\":[" + String.join(",", active) + "],\"standby\":[" + String.join(",", standby) + "]";
    }

    private void run() throws InterruptedException {
        SandboxLines.readCommands(commands);
        streams.start();
        String reported = "";
        try {
            while (true) {
                String command = commands.poll(200, java.util.concurrent.TimeUnit.MILLISECONDS);
                if ("exit".equals(command)) {
                    break;
                } else if ("pause".equals(command)) {
                    streams.pause();
                    SandboxLines.print("paused", "\"paused\":" + streams.isPaused());
                } else if ("resume".equals(command)) {
                    streams.resume();
                    SandboxLines.print("paused", "\"paused\":" + streams.isPaused());
                } else if (command != null) {
                    SandboxLines.print("error", "\"message\":\"unknown command: " + command + "\"");
                }
                String tasks = tasksJson();
                if (!tasks.equals(reported)) {
                    reported = tasks;
                    SandboxLines.print("tasks", tasks);
                }
            }
        } finally {
            streams.close(Duration.ofSeconds(10));
            SandboxLines.print("exit", "");
        }
    }

    public static void main(String[] argv) throws Exception {
        new SandboxStreamsApp(SandboxLines.arguments(argv)).run();
    }
}
