import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A real Java consumer for the sandbox, driven line by line on stdin so tests can stage
 * what a group does: consume, lag, stall, rewind, leave.
 *
 * <p>Arguments: {@code key=value} pairs: {@code bootstrap}, {@code group}, {@code topics}
 * (comma-separated), {@code assignor} (range, roundrobin, sticky, cooperative-sticky),
 * optional {@code instance} (group.instance.id), {@code rack} (client.rack), {@code client}
 * (client.id), {@code rate} (records per second; 0 = as fast as possible), {@code protocol}
 * (group.protocol: classic, the default, or consumer) and {@code remote} (group.remote.assignor,
 * consumer protocol only: uniform or range). In the consumer protocol (KIP-848) the broker
 * assigns and owns the session and heartbeat timeouts, so {@code assignor}, session.timeout.ms
 * and heartbeat.interval.ms are not set (Kafka 4's client rejects them).
 *
 * <p>Commands on stdin: {@code pause} (stay in the group, consume and commit nothing),
 * {@code stall} (stay in the group, consume nothing, and commit the same positions again every
 * second, as a consumer stuck on a record does while its auto-commit goes on), {@code resume},
 * {@code rate N}, {@code take N} (consume N more records, commit them at once, then pause: a consumer
 * whose progress and commits are staged exactly, whatever the machine's load), {@code seek TOPIC PARTITION OFFSET}
 * (then commit it), {@code exit} (leave the group cleanly).
 *
 * <p>Prints one JSON line per event on stdout: {@code assigned} (the whole assignment, each
 * time it changed: after a classic rebalance, or a consumer-protocol reconciliation step), {@code committed} (the offsets just committed, per partition), {@code exit}.
 * Offsets are committed synchronously after every poll that consumed something (during a take, once it is done).
 */
public final class SandboxConsumer {
    private static final Map<String, String> ASSIGNORS = Map.of(
            "range", "org.apache.kafka.clients.consumer.RangeAssignor",
            "roundrobin", "org.apache.kafka.clients.consumer.RoundRobinAssignor",
            "sticky", "org.apache.kafka.clients.consumer.StickyAssignor",
            "cooperative-sticky", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");

    private final ConcurrentLinkedQueue<String> commands = new ConcurrentLinkedQueue<>();
    private final KafkaConsumer<byte[], byte[]> consumer;
    private boolean paused;
    private boolean stalled;
    private long recommitted;
    private double rate;
    private long budget = -1; // records left to consume before pausing; -1: no limit
    private final Map<TopicPartition, OffsetAndMetadata> pending = new HashMap<>(); // consumed, not committed
    private String reported = "\"partitions\":[]"; // before the first assignment, nothing to report

    private SandboxConsumer(Map<String, String> args) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, SandboxLines.required(args, "bootstrap"));
        props.put(ConsumerConfig.GROUP_ID_CONFIG, SandboxLines.required(args, "group"));
        if (args.getOrDefault("protocol", "classic").equals("consumer")) {
            // literal keys: the same source compiles against Kafka 3.9's client
            props.put("group.protocol", "consumer");
            if (args.containsKey("remote")) {
                props.put("group.remote.assignor", args.get("remote"));
            }
        } else {
            props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignor(SandboxLines.required(args, "assignor")));
            props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
            props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
        }
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "50");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        if (args.containsKey("instance")) {
            props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, args.get("instance"));
        }
        if (args.containsKey("rack")) {
            props.put(ConsumerConfig.CLIENT_RACK_CONFIG, args.get("rack"));
        }
        if (args.containsKey("client")) {
            props.put(ConsumerConfig.CLIENT_ID_CONFIG, args.get("client"));
        }
        rate = Double.parseDouble(args.getOrDefault("rate", "0"));
        consumer = new KafkaConsumer<>(props);
        List<String> topics = Arrays.asList(SandboxLines.required(args, "topics").split(","));
        consumer.subscribe(topics, new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                // called after every rebalance (with only the new partitions under cooperative
                // rebalancing): report the whole assignment
                reportAssignment(true);
            }
        });
    }

    private static String assignor(String name) {
        String cls = ASSIGNORS.get(name);
        if (cls == null) {
            throw new IllegalArgumentException("unknown assignor " + name + "; known: " + ASSIGNORS.keySet());
        }
        return cls;
    }

    private String assignmentJson() {
        List<String> parts = new ArrayList<>();
        for (TopicPartition tp : consumer.assignment()) {
            parts.add("[\"" + tp.topic() + "\"," + tp.partition() + "]");
        }
        parts.sort(null);
        return "\"partitions\":[" + String.join(",", parts) + "]";
    }

    /** Prints the whole assignment after a rebalance ({@code always}), or when it changed. */
    private void reportAssignment(boolean always) {
        String now = assignmentJson();
        if (always || !now.equals(reported)) {
            reported = now;
            SandboxLines.print("assigned", now);
        }
    }

    /** Returns false when the consumer should leave. */
    private boolean apply(String command) {
        String[] words = command.split("\\s+");
        switch (words[0]) {
            case "exit":
                return false;
            case "pause":
                paused = true;
                consumer.pause(consumer.assignment());
                break;
            case "stall":
                paused = true;
                stalled = true;
                consumer.pause(consumer.assignment());
                break;
            case "resume":
                paused = false;
                stalled = false;
                consumer.resume(consumer.assignment());
                break;
            case "rate":
                rate = Double.parseDouble(words[1]);
                break;
            case "take":
                budget = Long.parseLong(words[1]);
                paused = budget == 0;
                stalled = false;
                if (!paused) {
                    consumer.resume(consumer.assignment());
                }
                break;
            case "seek":
                TopicPartition tp = new TopicPartition(words[1], Integer.parseInt(words[2]));
                long offset = Long.parseLong(words[3]);
                consumer.seek(tp, offset);
                Map<TopicPartition, OffsetAndMetadata> rewound = Map.of(tp, new OffsetAndMetadata(offset));
                consumer.commitSync(rewound);
                SandboxLines.print("committed", offsetsJson(rewound));
                break;
            default:
                SandboxLines.print("error", "\"message\":\"unknown command: " + words[0] + "\"");
        }
        return true;
    }

    private static String offsetsJson(Map<TopicPartition, OffsetAndMetadata> offsets) {
        List<String> parts = new ArrayList<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
            parts.add("[\"" + e.getKey().topic() + "\"," + e.getKey().partition() + "," + e.getValue().offset() + "]");
        }
        parts.sort(null);
        return "\"offsets\":[" + String.join(",", parts) + "]";
    }

    private void run() throws InterruptedException {
        SandboxLines.readCommands(commands);
        try {
            while (true) {
                String command;
                boolean keepGoing = true;
                while ((command = commands.poll()) != null && keepGoing) {
                    keepGoing = apply(command);
                }
                if (!keepGoing) {
                    break;
                }
                if (paused) {
                    consumer.pause(consumer.assignment()); // newly assigned partitions too
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                // the consumer protocol may revoke partitions without an onPartitionsAssigned call
                reportAssignment(false);
                if (stalled && System.currentTimeMillis() - recommitted >= 1000) {
                    recommitted = System.currentTimeMillis();
                    Map<TopicPartition, OffsetAndMetadata> same = new HashMap<>();
                    for (TopicPartition tp : consumer.assignment()) {
                        same.put(tp, new OffsetAndMetadata(consumer.position(tp)));
                    }
                    consumer.commitSync(same);
                    SandboxLines.print("committed", offsetsJson(same));
                }
                if (records.isEmpty()) {
                    continue;
                }
                Set<TopicPartition> heldBack = new HashSet<>();
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    TopicPartition tp = new TopicPartition(record.topic(), record.partition());
                    if (heldBack.contains(tp)) {
                        continue;
                    }
                    if (budget == 0) { // taken all it was told to: the rest is read again after the next take
                        consumer.seek(tp, record.offset());
                        heldBack.add(tp);
                        continue;
                    }
                    pending.put(tp, new OffsetAndMetadata(record.offset() + 1));
                    if (budget > 0) {
                        budget--;
                    }
                    if (rate > 0) {
                        Thread.sleep((long) (1000.0 / rate));
                    }
                }
                if (budget > 0) {
                    continue; // a take commits once, when it has read all it was told to
                }
                if (!pending.isEmpty()) {
                    consumer.commitSync(pending);
                    SandboxLines.print("committed", offsetsJson(pending));
                    pending.clear();
                }
                if (budget == 0) {
                    budget = -1;
                    paused = true;
                    consumer.pause(consumer.assignment());
                }
            }
        } finally {
            consumer.close(Duration.ofSeconds(10));
            SandboxLines.print("exit", "");
        }
    }

    public static void main(String[] argv) throws Exception {
        new SandboxConsumer(SandboxLines.arguments(argv)).run();
    }
}
