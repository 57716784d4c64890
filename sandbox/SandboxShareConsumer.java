import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A real share consumer (KIP-932, Kafka 4's {@code KafkaShareConsumer}) for the KRaft sandbox, driven
 * line by line on stdin so tests can stage what a share group does: consume, stop, leave.
 *
 * <p>Arguments: {@code key=value} pairs: {@code bootstrap}, {@code group}, {@code topics}
 * (comma-separated), optional {@code client} (client.id), {@code rack} (client.rack) and
 * {@code reset} ({@code earliest} or {@code latest}: the group's {@code share.auto.offset.reset},
 * a group config set through the Admin API before joining; Kafka's default is latest).
 *
 * <p>Commands on stdin: {@code stop} (stay in the group, fetch nothing), {@code resume},
 * {@code exit} (leave the group cleanly).
 *
 * <p>Prints one JSON line per event on stdout: {@code consumed} (per partition, the offset after the
 * last record acknowledged, acknowledgements committed synchronously), {@code exit}.
 */
public final class SandboxShareConsumer {
    private final ConcurrentLinkedQueue<String> commands = new ConcurrentLinkedQueue<>();
    private final KafkaShareConsumer<byte[], byte[]> consumer;
    private boolean stopped;

    private SandboxShareConsumer(Map<String, String> args) throws Exception {
        String bootstrap = SandboxLines.required(args, "bootstrap");
        String group = SandboxLines.required(args, "group");
        if (args.containsKey("reset")) {
            setOffsetReset(bootstrap, group, args.get("reset"));
        }
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "50");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        if (args.containsKey("client")) {
            props.put(ConsumerConfig.CLIENT_ID_CONFIG, args.get("client"));
        }
        if (args.containsKey("rack")) {
            props.put(ConsumerConfig.CLIENT_RACK_CONFIG, args.get("rack"));
        }
        consumer = new KafkaShareConsumer<>(props);
        consumer.subscribe(Arrays.asList(SandboxLines.required(args, "topics").split(",")));
    }

    /** The share group's start for partitions it has never read: a group config, not a client one. */
    private static void setOffsetReset(String bootstrap, String group, String reset) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(props)) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            AlterConfigOp set = new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", reset), AlterConfigOp.OpType.SET);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(set))).all().get();
        }
    }

    /** Returns false when the consumer should leave. */
    private boolean apply(String command) {
        switch (command) {
            case "exit":
                return false;
            case "stop":
                stopped = true;
                break;
            case "resume":
                stopped = false;
                break;
            default:
                SandboxLines.print("error", "\"message\":\"unknown command: " + command + "\"");
        }
        return true;
    }

    private void run() throws InterruptedException {
        SandboxLines.readCommands(commands);
        try {
            while (true) {
                String command;
                boolean keepGoing = true;
                while (keepGoing && (command = commands.poll()) != null) {
                    keepGoing = apply(command);
                }
                if (!keepGoing) {
                    break;
                }
                if (stopped) {
                    Thread.sleep(100); // the background thread keeps heartbeating: still a member
                    continue;
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                if (records.isEmpty()) {
                    continue;
                }
                Map<String, Long> next = new HashMap<>();
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    next.merge(record.topic() + "\"," + record.partition(), record.offset() + 1, Math::max);
                }
                consumer.commitSync(); // implicit acknowledgement: every record delivered is accepted
                List<String> parts = new ArrayList<>();
                next.forEach((tp, offset) -> parts.add("[\"" + tp + "," + offset + "]"));
                parts.sort(null);
                SandboxLines.print("consumed", "\"offsets\":[" + String.join(",", parts) + "]");
            }
        } finally {
            consumer.close(Duration.ofSeconds(10));
            SandboxLines.print("exit", "");
        }
    }

    public static void main(String[] argv) throws Exception {
        new SandboxShareConsumer(SandboxLines.arguments(argv)).run();
    }
}
