/*
 * kafka-ops: Kafka's own consumer-group assignors, driven over stdin/stdout.
 *
 * One JSON request per line in, one JSON response per line out (see bridge.py for the Python side).
 * Every assignment goes through the public path the consumer group leader takes in
 * ConsumerCoordinator.onLeaderElected: each member's subscription is serialized with
 * ConsumerProtocol at the member's protocol version and decoded again (exactly the bytes the leader
 * decodes), its group.instance.id is set, and ConsumerPartitionAssignor.assign(Cluster,
 * GroupSubscription) runs on a Cluster whose replicas carry their brokers' racks.
 *
 * A bad request fails that request only: the answer is {"id": ..., "error": "..."} and the loop
 * goes on. Anything the assignors log goes to stderr; stdout carries the protocol alone.
 *
 * Big groups (a million partitions) shape the assign messages: topic names travel once per message
 * in "names", partition lists as flat [nameIndex, partition, nameIndex, partition, ...]; a cluster is
 * sent once under an id and kept (the last few) for later requests; and the parsed request tree is
 * dropped before Kafka's assign() runs so the collector need not carry it.
 *
 * The broker-side assignors of the consumer protocol (ServerAssignorBridge, Kafka 4.x's group
 * coordinator) run in the same JVM, in a class loader of their own over Kafka 4.x's jars, loaded on
 * the first "load_server_assignors" request; "server_assign" requests go to them.
 */

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.RebalanceProtocol;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.AbstractPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.AbstractStickyAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ConsumerProtocolSubscription;
import org.apache.kafka.common.utils.AppInfoParser;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Paths;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

public final class AssignorBridge {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    /** Kafka's built-in assignors; a name maps to the one whose name() it is, as the leader looks it up. */
    private static final List<Supplier<ConsumerPartitionAssignor>> BUILT_IN = List.of(
        RangeAssignor::new, RoundRobinAssignor::new, StickyAssignor::new, CooperativeStickyAssignor::new);

    /** Follow-up rebalances a cooperative group may need; Kafka's own tests expect at most 4. */
    private static final int MAX_ROUNDS = 10;

    private AssignorBridge() {
    }

    /** A request Kafka's API cannot take as given: the message says what and where. */
    static final class BadRequest extends RuntimeException {
        BadRequest(String message) {
            super(message);
        }

        BadRequest(String message, Throwable cause) {
            super(message, cause);
        }
    }

    public static void main(String[] args) throws IOException {
        OutputStream protocol = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16);
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8));
        quietLogging();

        ObjectNode ready = JSON.objectNode();
        ready.put("ready", true);
        ready.put("kafka_clients", AppInfoParser.getVersion());
        ArrayNode names = ready.putArray("assignors");
        for (Supplier<ConsumerPartitionAssignor> s : BUILT_IN) names.add(s.get().name());
        write(protocol, ready);

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            write(protocol, answer(line));
        }
    }

    private static ObjectNode answer(String line) {
        JsonNode id = NullNode.getInstance();
        ObjectNode response;
        try {
            JsonNode request = MAPPER.readTree(line);
            if (request == null || !request.isObject()) throw new BadRequest("a request must be a JSON object");
            id = request.path("id");
            Supplier<ObjectNode> work = handle(request);
            request = null; // let the collector take the parsed tree while the work runs
            response = work.get();
        } catch (BadRequest e) {
            response = error(e.getMessage());
        } catch (IOException e) {
            response = error("the request is not valid JSON: " + e.getMessage());
        } catch (RuntimeException | StackOverflowError e) {
            e.printStackTrace();
            response = error(e.getClass().getName() + ": " + e.getMessage());
        }
        response.set("id", id);
        return response;
    }

    private static void write(OutputStream out, ObjectNode response) throws IOException {
        out.write(MAPPER.writeValueAsBytes(response));
        out.write('\n');
        out.flush();
    }

    private static ObjectNode error(String message) {
        ObjectNode node = JSON.objectNode();
        node.put("error", message);
        return node;
    }

    /** Reads the request into plain objects and returns the work, which no longer needs the JSON tree. */
    private static Supplier<ObjectNode> handle(JsonNode request) {
        String op = text(request, "op", "request");
        ObjectNode done;
        switch (op) {
            case "assign":
                return assign(request);
            case "serialize_subscription":
                done = bytesAnswer(ConsumerProtocol.serializeSubscription(
                    subscription(field(request, "subscription", "request"), "subscription"),
                    version(request)));
                break;
            case "deserialize_subscription":
                done = deserializeSubscription(bytes(request, "bytes", "request"));
                break;
            case "serialize_assignment":
                done = bytesAnswer(ConsumerProtocol.serializeAssignment(
                    assignment(field(request, "assignment", "request")), version(request)));
                break;
            case "deserialize_assignment":
                done = deserializeAssignment(bytes(request, "bytes", "request"));
                break;
            case "user_data":
                done = userData(request);
                break;
            case "member_data":
                done = memberData(request);
                break;
            case "load_server_assignors":
                done = loadServerAssignors(request);
                break;
            case "server_assign":
                return serverAssign(request);
            default:
                throw new BadRequest("unknown op '" + op + "'");
        }
        return () -> done;
    }

    // ---------------------------------------------------------------- assign

    /** One member as the leader sees it after decoding its JoinGroup metadata. */
    private static final class Member {
        final String id;
        final Optional<String> instanceId;
        final short version;
        final Subscription subscription;

        Member(String id, Optional<String> instanceId, short version, Subscription subscription) {
            this.id = id;
            this.instanceId = instanceId;
            this.version = version;
            this.subscription = subscription;
        }
    }

    /** A group to assign, parsed; or the reason it cannot be. */
    private static final class Job {
        final String where;
        final String failure;
        final String assignor;
        final boolean settle;
        final boolean preferRackAwareLogic;
        final boolean checkSticky;
        final String groupId;
        final List<Member> members;

        Job(String where, String failure) {
            this(where, failure, null, false, false, false, "", Collections.emptyList());
        }

        Job(String where, String failure, String assignor, boolean settle, boolean preferRackAwareLogic,
            boolean checkSticky, String groupId, List<Member> members) {
            this.where = where;
            this.failure = failure;
            this.assignor = assignor;
            this.settle = settle;
            this.preferRackAwareLogic = preferRackAwareLogic;
            this.checkSticky = checkSticky;
            this.groupId = groupId;
            this.members = members;
        }
    }

    /** Clusters by the id the Python side gave them; it resends one the JVM may have dropped. */
    private static final int CLUSTERS_KEPT = 4;
    private static final Map<String, Cluster> CLUSTERS = new LinkedHashMap<>(8, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Cluster> eldest) {
            return size() > CLUSTERS_KEPT;
        }
    };

    private static Supplier<ObjectNode> assign(JsonNode request) {
        String[] names = strings(request, "names", "request").toArray(new String[0]);
        String clusterId = text(request, "cluster_id", "request");
        Cluster cluster;
        if (request.hasNonNull("cluster")) {
            cluster = cluster(request.get("cluster"));
            CLUSTERS.put(clusterId, cluster);
        } else {
            cluster = CLUSTERS.get(clusterId);
            if (cluster == null) throw new BadRequest("request: cluster '" + clusterId + "' is not known here; send it");
        }
        JsonNode groups = field(request, "groups", "request");
        if (!groups.isArray()) throw new BadRequest("request: 'groups' must be a list");
        List<Job> jobs = new ArrayList<>();
        for (JsonNode group : groups) {
            String where = "group " + jobs.size() + (group.hasNonNull("group_id") ? " ('" + group.get("group_id").asText() + "')" : "");
            try {
                jobs.add(job(group, names, where));
            } catch (BadRequest e) {
                jobs.add(new Job(where, e.getMessage()));
            }
        }
        return () -> {
            ObjectNode response = JSON.objectNode();
            Names out = new Names();
            ArrayNode results = response.putArray("results");
            for (Job job : jobs) {
                if (job.failure != null) {
                    results.add(error(job.failure));
                    continue;
                }
                try {
                    results.add(assignGroup(job, cluster, out));
                } catch (BadRequest e) {
                    results.add(error(e.getMessage()));
                } catch (RuntimeException | StackOverflowError e) {
                    e.printStackTrace();
                    results.add(error(job.where + ": " + e.getClass().getName() + ": " + e.getMessage()));
                }
            }
            response.set("names", out.json);
            return response;
        };
    }

    private static Job job(JsonNode group, String[] names, String where) {
        String name = text(group, "assignor", where);
        newAssignor(name, where); // fail early on an unknown name
        List<Member> members = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        JsonNode memberNodes = field(group, "members", where);
        if (!memberNodes.isArray()) throw new BadRequest(where + ": 'members' must be a list");
        for (JsonNode node : memberNodes) {
            Member member = member(node, names, where + " member " + members.size());
            if (!seen.add(member.id)) throw new BadRequest(where + ": member id '" + member.id + "' appears twice");
            members.add(member);
        }
        return new Job(where, null, name, group.path("settle").asBoolean(false),
            group.path("prefer_rack_aware_logic").asBoolean(false), group.path("check_sticky").asBoolean(false),
            group.path("group_id").asText(""), members);
    }

    private static ObjectNode assignGroup(Job job, Cluster cluster, Names names) {
        ConsumerPartitionAssignor assignor = newAssignor(job.assignor, job.where);
        if (job.preferRackAwareLogic) preferRackAwareLogic(assignor);
        boolean cooperative = assignor.supportedProtocols().contains(RebalanceProtocol.COOPERATIVE);
        List<Member> members = job.members;

        // The leader keeps subscriptions in a HashMap filled in JoinGroup response order.
        Map<String, Subscription> subscriptions = new HashMap<>();
        int generation = -1;
        for (Member m : members) {
            subscriptions.put(m.id, m.subscription);
            generation = Math.max(generation, m.subscription.generationId().orElse(-1));
        }
        // The rebalance being simulated completes the generation after the newest one members report.
        generation += 1;

        ObjectNode result = JSON.objectNode();
        ArrayNode rounds = result.putArray("rounds");
        boolean settled = true;
        while (true) {
            long start = System.nanoTime();
            GroupAssignment assignment = assignor.assign(cluster, new GroupSubscription(subscriptions));
            double seconds = (System.nanoTime() - start) / 1e9;
            Map<String, Assignment> byMember = assignment.groupAssignment();
            rounds.add(round(members, byMember, assignor, seconds, job.checkSticky, names));

            if (!job.settle || !cooperative || !anyRevoked(members, subscriptions, byMember)) break;
            if (rounds.size() >= MAX_ROUNDS) {
                settled = false;
                break;
            }
            // Each member revoked what it lost and rejoins at once, owning what it was just given,
            // at the generation the rebalance completed (ConsumerCoordinator.onJoinComplete + metadata()).
            Map<String, Subscription> followUp = new HashMap<>();
            for (Member m : members) {
                Assignment given = byMember.getOrDefault(m.id, new Assignment(Collections.emptyList()));
                followUp.put(m.id, rejoin(m, subscriptions.get(m.id), given, job.assignor, job.groupId, generation));
            }
            subscriptions = followUp;
            generation += 1;
        }
        result.put("settled", settled);
        return result;
    }

    private static boolean anyRevoked(List<Member> members, Map<String, Subscription> subscriptions,
                                      Map<String, Assignment> byMember) {
        for (Member m : members) {
            Assignment given = byMember.get(m.id);
            List<TopicPartition> kept = given == null ? Collections.emptyList() : given.partitions();
            if (!new HashSet<>(kept).containsAll(subscriptions.get(m.id).ownedPartitions())) return true;
        }
        return false;
    }

    private static Subscription rejoin(Member m, Subscription previous, Assignment given, String assignorName,
                                       String groupId, int generation) {
        ConsumerPartitionAssignor own = newAssignor(assignorName, "member '" + m.id + "'");
        own.onAssignment(given, new ConsumerGroupMetadata(groupId, generation, m.id, m.instanceId));
        List<String> topics = previous.topics();
        ByteBuffer userData = own.subscriptionUserData(new HashSet<>(topics));
        Subscription joined = new Subscription(topics, userData, given.partitions(), generation, previous.rackId());
        if (m.version >= ConsumerProtocolSubscription.HIGHEST_SUPPORTED_VERSION) return asLeaderDecodes(joined, m.instanceId);
        return decodeAsLeader(ConsumerProtocol.serializeSubscription(joined, m.version), m.instanceId, "member '" + m.id + "'");
    }

    private static ObjectNode round(List<Member> members, Map<String, Assignment> byMember,
                                    ConsumerPartitionAssignor assignor, double seconds, boolean checkSticky,
                                    Names names) {
        ObjectNode round = JSON.objectNode();
        ArrayNode assignment = round.putArray("assignment");
        ArrayNode userData = round.putArray("user_data");
        for (Member m : members) {
            Assignment given = byMember.get(m.id);
            if (given == null) continue;
            ArrayNode entry = assignment.addArray();
            entry.add(m.id);
            entry.add(names.flat(given.partitions()));
            if (given.userData() != null) {
                ArrayNode data = userData.addArray();
                data.add(m.id);
                data.add(base64(given.userData()));
            }
        }
        if (assignor instanceof AbstractStickyAssignor) {
            AbstractStickyAssignor sticky = (AbstractStickyAssignor) assignor;
            Map<TopicPartition, String> transferring = sticky.partitionsTransferringOwnership();
            if (transferring == null) {
                round.putNull("transferring");
            } else {
                // grouped by the member the partitions go to
                Map<String, List<TopicPartition>> byNewOwner = new LinkedHashMap<>();
                for (Map.Entry<TopicPartition, String> e : transferring.entrySet())
                    byNewOwner.computeIfAbsent(e.getValue(), k -> new ArrayList<>()).add(e.getKey());
                ArrayNode moves = round.putArray("transferring");
                for (Map.Entry<String, List<TopicPartition>> e : byNewOwner.entrySet())
                    moves.addArray().add(e.getKey()).add(names.flat(e.getValue()));
            }
            if (checkSticky) {
                try {
                    round.put("sticky", sticky.isSticky());
                } catch (NullPointerException e) {
                    round.putNull("sticky"); // only the general (unequal subscriptions) path tracks movements
                }
            }
        }
        round.put("assign_seconds", seconds);
        return round;
    }

    /** The topic-name table of one response; partitions refer to names by index. */
    private static final class Names {
        final ArrayNode json = JSON.arrayNode();
        private final Map<String, Integer> index = new HashMap<>();

        ArrayNode flat(List<TopicPartition> partitions) {
            ArrayNode out = JSON.arrayNode();
            for (TopicPartition tp : partitions) {
                Integer i = index.get(tp.topic());
                if (i == null) {
                    i = index.size();
                    index.put(tp.topic(), i);
                    json.add(tp.topic());
                }
                out.add(i);
                out.add(tp.partition());
            }
            return out;
        }
    }

    /** Topic names sent as indexes into the request's name table. */
    private static List<String> named(JsonNode node, String[] names, String where) {
        if (!node.isArray()) throw new BadRequest(where + ": must be a list of name indexes");
        List<String> out = new ArrayList<>(node.size());
        for (JsonNode n : node) {
            if (!n.isInt() || n.asInt() < 0 || n.asInt() >= names.length)
                throw new BadRequest(where + ": " + n + " is not a name index");
            out.add(names[n.asInt()]);
        }
        return out;
    }

    /** Partitions sent as [nameIndex, partition, ...] against the request's name table. */
    private static List<TopicPartition> flat(JsonNode node, String[] names, String where) {
        if (!node.isArray() || node.size() % 2 != 0)
            throw new BadRequest(where + ": partitions must be a flat list [nameIndex, partition, ...]");
        List<TopicPartition> out = new ArrayList<>(node.size() / 2);
        for (int i = 0; i < node.size(); i += 2) {
            JsonNode n = node.get(i);
            JsonNode p = node.get(i + 1);
            if (!n.isInt() || !p.isInt() || n.asInt() < 0 || n.asInt() >= names.length)
                throw new BadRequest(where + ": entry " + i / 2 + " is not [name index, partition]");
            out.add(new TopicPartition(names[n.asInt()], p.asInt()));
        }
        return out;
    }

    private static Member member(JsonNode node, String[] names, String where) {
        String id = text(node, "member_id", where);
        where = where + " ('" + id + "')";
        Optional<String> instanceId = Optional.ofNullable(textOrNull(node, "group_instance_id", where));
        ByteBuffer wire;
        if (node.hasNonNull("metadata")) {
            wire = ByteBuffer.wrap(bytes(node, "metadata", where));
        } else {
            short version = (short) node.path("version").asInt(ConsumerProtocolSubscription.HIGHEST_SUPPORTED_VERSION);
            List<TopicPartition> owned = node.hasNonNull("owned") ? flat(node.get("owned"), names, where + " 'owned'") : Collections.emptyList();
            List<String> topics = named(field(node, "topics", where), names, where + " 'topics'");
            Subscription sent = subscription(node, topics, owned, where);
            if (version >= ConsumerProtocolSubscription.HIGHEST_SUPPORTED_VERSION)
                return new Member(id, instanceId, ConsumerProtocolSubscription.HIGHEST_SUPPORTED_VERSION, asLeaderDecodes(sent, instanceId));
            try {
                wire = ConsumerProtocol.serializeSubscription(sent, version);
            } catch (RuntimeException e) {
                throw new BadRequest(where + ": cannot serialize its subscription at version " + version + ": " + e.getMessage(), e);
            }
        }
        short version;
        try {
            version = ConsumerProtocol.deserializeVersion(wire.duplicate());
        } catch (RuntimeException e) {
            throw new BadRequest(where + ": " + e.getMessage(), e);
        }
        return new Member(id, instanceId, version, decodeAsLeader(wire, instanceId, where));
    }

    /**
     * What decodeAsLeader returns for this subscription serialized at the highest version, which
     * carries every field: ConsumerProtocol sorts the topics and the owned partitions, and reads an
     * empty rack as none (ConsumerProtocol.serializeSubscription / deserializeSubscription, 3.9).
     * Built directly because decoding a member's owned partitions grows Kafka's
     * ImplicitLinkedHashCollection one resize at a time: seconds for a million-partition group,
     * for the same Subscription. test_bridge checks the two paths agree.
     */
    private static Subscription asLeaderDecodes(Subscription sent, Optional<String> instanceId) {
        List<String> topics = new ArrayList<>(sent.topics());
        Collections.sort(topics);
        List<TopicPartition> owned = new ArrayList<>(sent.ownedPartitions());
        owned.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        ByteBuffer userData = sent.userData() == null ? null : sent.userData().duplicate();
        Optional<String> rack = sent.rackId().filter(r -> !r.isEmpty());
        Subscription decoded = new Subscription(topics, userData, owned, sent.generationId().orElse(-1), rack);
        decoded.setGroupInstanceId(instanceId);
        return decoded;
    }

    /** What ConsumerCoordinator.onLeaderElected does with one JoinGroup member's metadata. */
    private static Subscription decodeAsLeader(ByteBuffer wire, Optional<String> instanceId, String where) {
        Subscription subscription;
        try {
            subscription = ConsumerProtocol.deserializeSubscription(wire);
        } catch (RuntimeException e) {
            throw new BadRequest(where + ": Kafka cannot decode its subscription: " + e.getMessage(), e);
        }
        subscription.setGroupInstanceId(instanceId);
        return subscription;
    }

    private static ConsumerPartitionAssignor newAssignor(String name, String where) {
        List<String> names = new ArrayList<>();
        for (Supplier<ConsumerPartitionAssignor> supplier : BUILT_IN) {
            ConsumerPartitionAssignor assignor = supplier.get();
            if (assignor.name().equals(name)) return assignor;
            names.add(assignor.name());
        }
        throw new BadRequest(where + ": unknown assignor '" + name + "'; Kafka's built-in assignors are " + names);
    }

    /** Kafka's tests flip this package-private switch (AbstractPartitionAssignorTest.preferRackAwareLogic). */
    private static void preferRackAwareLogic(ConsumerPartitionAssignor assignor) {
        try {
            Field field = AbstractPartitionAssignor.class.getDeclaredField("preferRackAwareLogic");
            field.setAccessible(true);
            field.setBoolean(assignor, true);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new BadRequest("cannot set preferRackAwareLogic on " + assignor.name() + ": " + e, e);
        }
    }

    // ---------------------------------------------------------------- server-side assignors

    /** ServerAssignorBridge, in its own class loader; null until loaded. */
    private static Function<String, String> serverAssignors;
    private static String serverAssignorsInfo;

    /** Loads ServerAssignorBridge from "classpath" (its classes and Kafka 4.x's jars), once per JVM. */
    @SuppressWarnings("unchecked")
    private static ObjectNode loadServerAssignors(JsonNode request) {
        if (serverAssignors == null) {
            List<String> entries = strings(request, "classpath", "request");
            URL[] urls = new URL[entries.size()];
            try {
                for (int i = 0; i < urls.length; i++) urls[i] = Paths.get(entries.get(i)).toUri().toURL();
            } catch (MalformedURLException | RuntimeException e) {
                throw new BadRequest("request: a classpath entry is not a path: " + e.getMessage(), e);
            }
            // The platform loader as parent: nothing of kafka-clients 3.9 (this JVM's classpath) is visible there.
            ClassLoader loader = new URLClassLoader("kafka4-group-coordinator", urls, ClassLoader.getPlatformClassLoader());
            try {
                Class<?> type = Class.forName("ServerAssignorBridge", true, loader);
                serverAssignorsInfo = (String) type.getMethod("describe").invoke(null);
                serverAssignors = (Function<String, String>) type.getConstructor().newInstance();
            } catch (InvocationTargetException e) {
                throw new BadRequest("cannot load the server-side assignors: " + e.getCause(), e.getCause());
            } catch (ReflectiveOperationException | LinkageError e) {
                throw new BadRequest("cannot load the server-side assignors from " + entries.size() + " classpath entries: " + e, e);
            }
        }
        try {
            return (ObjectNode) MAPPER.readTree(serverAssignorsInfo);
        } catch (IOException e) {
            throw new BadRequest("the server-side assignors described themselves in bad JSON: " + e.getMessage(), e);
        }
    }

    private static Supplier<ObjectNode> serverAssign(JsonNode request) {
        Function<String, String> assignors = serverAssignors;
        if (assignors == null) throw new BadRequest("the server-side assignors are not loaded: send load_server_assignors first");
        String line = request.toString();
        return () -> {
            try {
                return (ObjectNode) MAPPER.readTree(assignors.apply(line));
            } catch (IOException e) {
                throw new BadRequest("the server-side assignors answered in bad JSON: " + e.getMessage(), e);
            }
        };
    }

    // ---------------------------------------------------------------- cluster

    /** The metadata the leader would hold: brokers with racks, partitions with their replica nodes. */
    private static Cluster cluster(JsonNode node) {
        Map<Integer, Node> nodes = new LinkedHashMap<>();
        JsonNode brokers = field(node, "brokers", "cluster");
        if (!brokers.isArray()) throw new BadRequest("cluster: 'brokers' must be a list of [id, rack]");
        for (JsonNode broker : brokers) {
            if (!broker.isArray() || broker.size() != 2 || !broker.get(0).isInt())
                throw new BadRequest("cluster: each broker must be [id, rack or null], got " + broker);
            int id = broker.get(0).asInt();
            String rack = broker.get(1).isNull() ? null : broker.get(1).asText();
            nodes.put(id, new Node(id, "broker-" + id, 9092, rack));
        }
        List<PartitionInfo> partitions = new ArrayList<>();
        JsonNode topics = field(node, "topics", "cluster");
        if (!topics.isArray()) throw new BadRequest("cluster: 'topics' must be a list of [name, partitions]");
        for (JsonNode topic : topics) {
            if (!topic.isArray() || topic.size() != 2 || !topic.get(0).isTextual())
                throw new BadRequest("cluster: each topic must be [name, replica lists or a partition count]");
            String name = topic.get(0).asText();
            JsonNode layout = topic.get(1);
            if (layout.isInt()) {
                for (int p = 0; p < layout.asInt(); p++) partitions.add(new PartitionInfo(name, p, null, new Node[0], new Node[0]));
                continue;
            }
            if (!layout.isArray()) throw new BadRequest("cluster: topic '" + name + "' needs replica lists or a partition count");
            int p = 0;
            for (JsonNode replicaIds : layout) {
                Node[] replicas = new Node[replicaIds.size()];
                for (int r = 0; r < replicas.length; r++) {
                    JsonNode id = replicaIds.get(r);
                    if (!id.isInt()) throw new BadRequest("cluster: topic '" + name + "' partition " + p + ": replica ids must be integers");
                    // A replica on a broker missing from metadata gets a bare node, as MetadataResponse builds it.
                    Node known = nodes.get(id.asInt());
                    replicas[r] = known != null ? known : new Node(id.asInt(), "", -1);
                }
                partitions.add(new PartitionInfo(name, p, replicas.length > 0 ? replicas[0] : null, replicas, replicas));
                p++;
            }
        }
        return new Cluster("kafka-ops-what-if", nodes.values(), partitions, Collections.emptySet(), Collections.emptySet());
    }

    // ---------------------------------------------------------------- protocol cross-checks

    private static short version(JsonNode request) {
        JsonNode v = field(request, "version", "request");
        if (!v.isInt()) throw new BadRequest("request: 'version' must be an integer");
        return (short) v.asInt();
    }

    private static ObjectNode bytesAnswer(ByteBuffer buffer) {
        ObjectNode node = JSON.objectNode();
        node.put("bytes", base64(buffer));
        return node;
    }

    private static ObjectNode deserializeSubscription(byte[] data) {
        ByteBuffer buffer = ByteBuffer.wrap(data);
        ObjectNode node = JSON.objectNode();
        try {
            node.put("version", ConsumerProtocol.deserializeVersion(buffer.duplicate()));
            Subscription s = ConsumerProtocol.deserializeSubscription(buffer);
            ObjectNode sub = node.putObject("subscription");
            ArrayNode topics = sub.putArray("topics");
            s.topics().forEach(topics::add);
            sub.put("user_data", s.userData() == null ? null : base64(s.userData()));
            sub.set("owned", runs(s.ownedPartitions()));
            sub.put("generation", s.generationId().orElse(-1));
            sub.put("rack", s.rackId().orElse(null));
        } catch (RuntimeException e) {
            throw new BadRequest("Kafka cannot decode the subscription: " + e.getClass().getSimpleName() + ": " + e.getMessage(), e);
        }
        return node;
    }

    private static ObjectNode deserializeAssignment(byte[] data) {
        ByteBuffer buffer = ByteBuffer.wrap(data);
        ObjectNode node = JSON.objectNode();
        try {
            node.put("version", ConsumerProtocol.deserializeVersion(buffer.duplicate()));
            Assignment a = ConsumerProtocol.deserializeAssignment(buffer);
            ObjectNode out = node.putObject("assignment");
            out.set("partitions", runs(a.partitions()));
            out.put("user_data", a.userData() == null ? null : base64(a.userData()));
        } catch (RuntimeException e) {
            throw new BadRequest("Kafka cannot decode the assignment: " + e.getClass().getSimpleName() + ": " + e.getMessage(), e);
        }
        return node;
    }

    /** The user data a consumer running this assignor sends after being given `assigned` at `generation`. */
    private static ObjectNode userData(JsonNode request) {
        ConsumerPartitionAssignor assignor = newAssignor(text(request, "assignor", "request"), "request");
        JsonNode assigned = request.path("assigned");
        if (!assigned.isMissingNode() && !assigned.isNull()) {
            ConsumerGroupMetadata metadata = new ConsumerGroupMetadata(
                request.path("group_id").asText(""), request.path("generation").asInt(-1),
                request.path("member_id").asText(""), Optional.ofNullable(textOrNull(request, "group_instance_id", "request")));
            assignor.onAssignment(new Assignment(runs(assigned, "request 'assigned'")), metadata);
        }
        ByteBuffer data = assignor.subscriptionUserData(new HashSet<>(strings(request, "topics", "request")));
        ObjectNode node = JSON.objectNode();
        node.put("bytes", data == null ? null : base64(data));
        return node;
    }

    /** How a sticky assignor reads one member: AbstractStickyAssignor.memberData (protected, by reflection). */
    private static ObjectNode memberData(JsonNode request) {
        ConsumerPartitionAssignor assignor = newAssignor(text(request, "assignor", "request"), "request");
        if (!(assignor instanceof AbstractStickyAssignor))
            throw new BadRequest("request: member_data needs a sticky assignor, not '" + assignor.name() + "'");
        Subscription subscription = subscription(field(request, "subscription", "request"), "subscription");
        AbstractStickyAssignor.MemberData data;
        try {
            Method method = assignor.getClass().getDeclaredMethod("memberData", Subscription.class);
            method.setAccessible(true);
            data = (AbstractStickyAssignor.MemberData) method.invoke(assignor, subscription);
        } catch (InvocationTargetException e) {
            throw new BadRequest("memberData failed: " + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new BadRequest("cannot call memberData: " + e, e);
        }
        ObjectNode node = JSON.objectNode();
        node.set("partitions", runs(data.partitions));
        if (data.generation.isPresent()) node.put("generation", data.generation.get());
        else node.putNull("generation");
        node.put("rack", data.rackId.orElse(null));
        return node;
    }

    // ---------------------------------------------------------------- JSON helpers

    /** A subscription built directly, as a Java consumer builds it before serializing. */
    private static Subscription subscription(JsonNode node, String where) {
        List<TopicPartition> owned = node.hasNonNull("owned") ? runs(node.get("owned"), where + " 'owned'") : Collections.emptyList();
        return subscription(node, strings(node, "topics", where), owned, where);
    }

    private static Subscription subscription(JsonNode node, List<String> topics, List<TopicPartition> owned, String where) {
        ByteBuffer userData = node.hasNonNull("user_data") ? ByteBuffer.wrap(bytes(node, "user_data", where)) : null;
        JsonNode generation = node.path("generation");
        if (!generation.isMissingNode() && !generation.isInt()) throw new BadRequest(where + ": 'generation' must be an integer");
        return new Subscription(topics, userData, owned, generation.asInt(-1),
            Optional.ofNullable(textOrNull(node, "rack", where)));
    }

    private static Assignment assignment(JsonNode node) {
        List<TopicPartition> partitions = runs(field(node, "partitions", "assignment"), "assignment 'partitions'");
        ByteBuffer userData = node.hasNonNull("user_data") ? ByteBuffer.wrap(bytes(node, "user_data", "assignment")) : null;
        return new Assignment(partitions, userData);
    }

    /** Partitions as runs of one topic, [[topic, [p, ...]], ...], keeping their order. */
    private static ArrayNode runs(List<TopicPartition> partitions) {
        ArrayNode out = JSON.arrayNode();
        String topic = null;
        ArrayNode numbers = null;
        for (TopicPartition tp : partitions) {
            if (numbers == null || !tp.topic().equals(topic)) {
                topic = tp.topic();
                ArrayNode run = out.addArray();
                run.add(topic);
                numbers = run.addArray();
            }
            numbers.add(tp.partition());
        }
        return out;
    }

    private static List<TopicPartition> runs(JsonNode node, String where) {
        if (!node.isArray()) throw new BadRequest(where + ": partitions must be a list of [topic, [partition, ...]]");
        List<TopicPartition> out = new ArrayList<>();
        for (JsonNode run : node) {
            if (!run.isArray() || run.size() != 2 || !run.get(0).isTextual() || !run.get(1).isArray())
                throw new BadRequest(where + ": each entry must be [topic, [partition, ...]], got " + run);
            String topic = run.get(0).asText();
            for (JsonNode p : run.get(1)) {
                if (!p.isInt()) throw new BadRequest(where + ": partition numbers of '" + topic + "' must be integers");
                out.add(new TopicPartition(topic, p.asInt()));
            }
        }
        return out;
    }

    private static JsonNode field(JsonNode node, String name, String where) {
        JsonNode value = node.get(name);
        if (value == null || value.isNull()) throw new BadRequest(where + ": '" + name + "' is missing");
        return value;
    }

    private static String text(JsonNode node, String name, String where) {
        JsonNode value = field(node, name, where);
        if (!value.isTextual()) throw new BadRequest(where + ": '" + name + "' must be a string");
        return value.asText();
    }

    private static String textOrNull(JsonNode node, String name, String where) {
        JsonNode value = node.get(name);
        if (value == null || value.isNull()) return null;
        if (!value.isTextual()) throw new BadRequest(where + ": '" + name + "' must be a string or null");
        return value.asText();
    }

    private static List<String> strings(JsonNode node, String name, String where) {
        JsonNode value = field(node, name, where);
        if (!value.isArray()) throw new BadRequest(where + ": '" + name + "' must be a list of strings");
        List<String> out = new ArrayList<>(value.size());
        for (JsonNode item : value) {
            if (!item.isTextual()) throw new BadRequest(where + ": '" + name + "' must be a list of strings");
            out.add(item.asText());
        }
        return out;
    }

    private static byte[] bytes(JsonNode node, String name, String where) {
        try {
            return Base64.getDecoder().decode(text(node, name, where));
        } catch (IllegalArgumentException e) {
            throw new BadRequest(where + ": '" + name + "' is not base64: " + e.getMessage(), e);
        }
    }

    private static String base64(ByteBuffer buffer) {
        ByteBuffer copy = buffer.duplicate();
        byte[] data = new byte[copy.remaining()];
        copy.get(data);
        return Base64.getEncoder().encodeToString(data);
    }

    /**
     * Kafka's classes log through slf4j to reload4j; unconfigured, reload4j would stay at DEBUG and
     * format large maps nobody reads. Keep WARN and above, on stderr. By reflection, so the bridge
     * still runs (noisier) if the jar set ever binds slf4j to something else.
     */
    private static void quietLogging() {
        try {
            Class<?> loggerClass = Class.forName("org.apache.log4j.Logger");
            Class<?> levelClass = Class.forName("org.apache.log4j.Level");
            Class<?> layoutClass = Class.forName("org.apache.log4j.Layout");
            Class<?> appenderClass = Class.forName("org.apache.log4j.Appender");
            Object root = loggerClass.getMethod("getRootLogger").invoke(null);
            loggerClass.getMethod("removeAllAppenders").invoke(root);
            loggerClass.getMethod("setLevel", levelClass).invoke(root, levelClass.getField("WARN").get(null));
            Object layout = Class.forName("org.apache.log4j.PatternLayout").getConstructor(String.class)
                .newInstance("%p %c: %m%n");
            Object appender = Class.forName("org.apache.log4j.ConsoleAppender")
                .getConstructor(layoutClass, String.class).newInstance(layout, "System.err");
            loggerClass.getMethod("addAppender", appenderClass).invoke(root, appender);
        } catch (ReflectiveOperationException | LinkageError e) {
            System.err.println("kafka-ops assignor bridge: could not quiet log4j (" + e + "); Kafka's logs stay at their defaults");
        }
    }
}
