/*
 * kafka-ops: Kafka's broker-side assignors of the consumer protocol (KIP-848), UniformAssignor and
 * RangeAssignor of the group-coordinator module, for AssignorBridge's JVM.
 *
 * Compiled against Kafka 4.x's jars and loaded by AssignorBridge in a class loader of its own over
 * those jars (its parent is the platform loader), so kafka-clients 3.9 of the client assignors and
 * kafka-clients 4.x of the group coordinator never meet. The two sides share JDK types only: this
 * class is a Function from one request line (JSON) to one answer (JSON, without the id).
 *
 * The input is built as the group coordinator's TargetAssignmentBuilder builds it: a member's
 * subscribed topic names resolve to topic ids through TopicIds (names the metadata does not know
 * are skipped), members go in a HashMap, the subscription type is ModernGroup.subscriptionType of
 * the members' name counts, the inverted target assignment comes from the members' current
 * assignments, and GroupSpecImpl / MemberSubscriptionAndAssignmentImpl are Kafka's own classes.
 * SubscribedTopicDescriber answers from the request's cluster: partition counts (-1 for a topic it
 * does not hold, as SubscribedTopicDescriberImpl) and the racks of a partition's replicas.
 *
 * Request: {"names": [topic, ...], "cluster": {"brokers": [[id, rack]], "topics": [[name, count or
 * replica lists, topic id or null]]}, "groups": [{"group_id", "assignor": "uniform" | "range",
 * "members": [{"member_id", "instance_id", "rack", "topics": [name index, ...], "assigned": [name
 * index, partition, ...]}], test switches "member_order": "given" (a LinkedHashMap in request order,
 * as Kafka's tests' TreeMaps), "ordered_assignments" (member ids whose assignment map keeps the
 * request's order, as mkOrderedAssignment), "subscription_type", "keep_unknown_topics"}]}.
 * Answer: {"names": [...], "results": [{"assignment": [[member, [name index, partition, ...]]],
 * "subscription_type", "assign_seconds"} or {"error": "..."}]}.
 */

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.internals.AppInfoParser;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataImage;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;
import org.apache.kafka.coordinator.group.modern.ModernGroup;
import org.apache.kafka.coordinator.group.modern.SubscriptionCount;
import org.apache.kafka.coordinator.group.modern.TopicIds;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;

public final class ServerAssignorBridge implements Function<String, String> {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    /** The broker's built-in assignors (group.consumer.assignors), by the name group.remote.assignor takes. */
    private static final List<Supplier<ConsumerGroupPartitionAssignor>> BUILT_IN = List.of(UniformAssignor::new, RangeAssignor::new);

    /** A request the assignors cannot take as given: the message says what and where. */
    static final class BadRequest extends RuntimeException {
        BadRequest(String message) {
            super(message);
        }
    }

    public ServerAssignorBridge() {
    }

    /** Kafka's version and the assignors' names, for AssignorBridge's answer to the loading request. */
    public static String describe() {
        ObjectNode node = JSON.objectNode();
        node.put("group_coordinator", AppInfoParser.getVersion());
        ArrayNode names = node.putArray("server_assignors");
        for (Supplier<ConsumerGroupPartitionAssignor> s : BUILT_IN) names.add(s.get().name());
        return node.toString();
    }

    @Override
    public String apply(String line) {
        ObjectNode response;
        try {
            response = assign(MAPPER.readTree(line));
        } catch (BadRequest e) {
            response = error(e.getMessage());
        } catch (IOException e) {
            response = error("the request is not valid JSON: " + e.getMessage());
        }
        try {
            return MAPPER.writeValueAsString(response);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ObjectNode error(String message) {
        ObjectNode node = JSON.objectNode();
        node.put("error", message);
        return node;
    }

    // ---------------------------------------------------------------- metadata

    /** Topics by name and id, and each partition's replica racks: what the coordinator's metadata image says. */
    private static final class Metadata implements SubscribedTopicDescriber, TopicIds.TopicResolver {
        final Map<String, Uuid> ids = new HashMap<>();
        final Map<Uuid, String> names = new HashMap<>();
        final Map<Uuid, List<Set<String>>> racks = new HashMap<>();
        boolean keepUnknownTopics;

        void add(String name, Uuid id, List<Set<String>> partitionRacks) {
            if (ids.containsKey(name)) throw new BadRequest("cluster: topic '" + name + "' appears twice");
            if (names.containsKey(id)) throw new BadRequest("cluster: topic id " + id + " is given to '" + names.get(id) + "' and '" + name + "'");
            ids.put(name, id);
            names.put(id, name);
            racks.put(id, partitionRacks);
        }

        @Override
        public int numPartitions(Uuid topicId) {
            List<Set<String>> partitions = racks.get(topicId);
            return partitions == null ? -1 : partitions.size();
        }

        @Override
        public Set<String> racksForPartition(Uuid topicId, int partition) {
            List<Set<String>> partitions = racks.get(topicId);
            if (partitions == null || partition < 0 || partition >= partitions.size()) return Collections.emptySet();
            return partitions.get(partition);
        }

        @Override
        public CoordinatorMetadataImage image() {
            return null;
        }

        @Override
        public String name(Uuid id) {
            String name = names.get(id);
            if (name == null && keepUnknownTopics) return unknownNames.get(id);
            return name;
        }

        @Override
        public Uuid id(String name) {
            Uuid id = ids.get(name);
            if (id == null && keepUnknownTopics) {
                id = idOf(name);
                unknownNames.put(id, name);
            }
            return id;
        }

        /** Topics a test subscribes to that the metadata does not hold (keep_unknown_topics). */
        final Map<Uuid, String> unknownNames = new HashMap<>();

        @Override
        public void clear() {
        }

        Uuid idOrDerived(String name) {
            Uuid id = ids.get(name);
            if (id != null) return id;
            id = idOf(name);
            unknownNames.put(id, name);
            return id;
        }

        String nameOf(Uuid id) {
            String name = names.containsKey(id) ? names.get(id) : unknownNames.get(id);
            if (name == null) throw new BadRequest("the assignor returned topic id " + id + ", which no topic has");
            return name;
        }

        /** An id for a topic no id was given for: fixed by its name, so what-ifs repeat. */
        static Uuid idOf(String name) {
            UUID u = UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8));
            return new Uuid(u.getMostSignificantBits(), u.getLeastSignificantBits());
        }
    }

    private static Metadata metadata(JsonNode node) {
        Map<Integer, String> brokerRacks = new HashMap<>();
        JsonNode brokers = field(node, "brokers", "cluster");
        if (!brokers.isArray()) throw new BadRequest("cluster: 'brokers' must be a list of [id, rack]");
        for (JsonNode broker : brokers) {
            if (!broker.isArray() || broker.size() != 2 || !broker.get(0).isInt())
                throw new BadRequest("cluster: each broker must be [id, rack or null], got " + broker);
            brokerRacks.put(broker.get(0).asInt(), broker.get(1).isNull() ? null : broker.get(1).asText());
        }
        Metadata metadata = new Metadata();
        JsonNode topics = field(node, "topics", "cluster");
        if (!topics.isArray()) throw new BadRequest("cluster: 'topics' must be a list of [name, partitions, id]");
        for (JsonNode topic : topics) {
            if (!topic.isArray() || topic.size() < 2 || !topic.get(0).isTextual())
                throw new BadRequest("cluster: each topic must be [name, replica lists or a partition count, topic id or null]");
            String name = topic.get(0).asText();
            JsonNode layout = topic.get(1);
            List<Set<String>> partitionRacks = new ArrayList<>();
            if (layout.isInt()) {
                for (int p = 0; p < layout.asInt(); p++) partitionRacks.add(Collections.emptySet());
            } else if (layout.isArray()) {
                for (JsonNode replicas : layout) {
                    Set<String> racks = new HashSet<>();
                    for (JsonNode id : replicas) {
                        if (!id.isInt()) throw new BadRequest("cluster: topic '" + name + "': replica ids must be integers");
                        String rack = brokerRacks.get(id.asInt());
                        if (rack != null) racks.add(rack);
                    }
                    partitionRacks.add(racks);
                }
            } else {
                throw new BadRequest("cluster: topic '" + name + "' needs replica lists or a partition count");
            }
            Uuid id;
            if (topic.size() > 2 && !topic.get(2).isNull()) {
                try {
                    id = Uuid.fromString(topic.get(2).asText());
                } catch (IllegalArgumentException e) {
                    throw new BadRequest("cluster: topic '" + name + "' has an id that is not a Kafka Uuid: " + topic.get(2));
                }
            } else {
                id = Metadata.idOf(name);
            }
            metadata.add(name, id, partitionRacks);
        }
        return metadata;
    }

    // ---------------------------------------------------------------- assign

    private static ObjectNode assign(JsonNode request) {
        if (request == null || !request.isObject()) throw new BadRequest("a request must be a JSON object");
        String[] names = strings(field(request, "names", "request"), "request 'names'");
        Metadata metadata = metadata(field(request, "cluster", "request"));
        JsonNode groups = field(request, "groups", "request");
        if (!groups.isArray()) throw new BadRequest("request: 'groups' must be a list");
        ObjectNode response = JSON.objectNode();
        Names out = new Names();
        ArrayNode results = response.putArray("results");
        int i = 0;
        for (JsonNode group : groups) {
            String where = "group " + i++ + (group.hasNonNull("group_id") ? " ('" + group.get("group_id").asText() + "')" : "");
            try {
                results.add(assignGroup(group, names, metadata, out, where));
            } catch (BadRequest e) {
                results.add(error(e.getMessage()));
            } catch (RuntimeException | StackOverflowError e) {
                e.printStackTrace();
                results.add(error(where + ": " + e.getClass().getName() + ": " + e.getMessage()));
            } finally {
                metadata.keepUnknownTopics = false;
                metadata.unknownNames.clear();
            }
        }
        response.set("names", out.json);
        return response;
    }

    private static ConsumerGroupPartitionAssignor newAssignor(String name, String where) {
        List<String> known = new ArrayList<>();
        for (Supplier<ConsumerGroupPartitionAssignor> supplier : BUILT_IN) {
            ConsumerGroupPartitionAssignor assignor = supplier.get();
            if (assignor.name().equals(name)) return assignor;
            known.add(assignor.name());
        }
        throw new BadRequest(where + ": unknown server-side assignor '" + name + "'; the broker's built-in assignors are " + known);
    }

    private static ObjectNode assignGroup(JsonNode group, String[] names, Metadata metadata, Names out, String where) {
        ConsumerGroupPartitionAssignor assignor = newAssignor(text(group, "assignor", where), where);
        metadata.keepUnknownTopics = group.path("keep_unknown_topics").asBoolean(false);
        boolean given = "given".equals(group.path("member_order").asText("hash"));
        // TargetAssignmentBuilder.build(): a HashMap of member specs.
        Map<String, MemberSubscriptionAndAssignmentImpl> members = given ? new LinkedHashMap<>() : new HashMap<>();
        Map<String, SubscriptionCount> subscribedTopicNames = new HashMap<>();
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        Set<String> ordered = new HashSet<>();
        for (JsonNode n : group.path("ordered_assignments")) ordered.add(n.asText());
        JsonNode memberNodes = field(group, "members", where);
        if (!memberNodes.isArray()) throw new BadRequest(where + ": 'members' must be a list");
        int m = 0;
        for (JsonNode node : memberNodes) {
            String at = where + " member " + m++;
            String memberId = text(node, "member_id", at);
            if (members.containsKey(memberId)) throw new BadRequest(where + ": member id '" + memberId + "' appears twice");
            Set<String> topics = new HashSet<>();
            for (JsonNode n : field(node, "topics", at)) topics.add(nameAt(n, names, at));
            for (String topic : topics) subscribedTopicNames.compute(topic, SubscriptionCount::incNameCount);
            // HashMaps, as the coordinator's Assignment.fromRecord builds them (Collectors.toMap,
            // which puts); a Java test's mkOrderedAssignment is a LinkedHashMap
            // (ordered_assignments). The uniform assignor keeps a member's partitions in that map's
            // order, and where two topic ids share a bucket, put appends the later one to it while
            // computeIfAbsent would insert it ahead: so get and put, never computeIfAbsent.
            Map<Uuid, Set<Integer>> assigned = ordered.contains(memberId) ? new LinkedHashMap<>() : new HashMap<>();
            JsonNode flat = node.path("assigned");
            if (!flat.isMissingNode() && !flat.isNull()) {
                if (!flat.isArray() || flat.size() % 2 != 0)
                    throw new BadRequest(at + ": 'assigned' must be a flat list [nameIndex, partition, ...]");
                for (int k = 0; k < flat.size(); k += 2) {
                    String topic = nameAt(flat.get(k), names, at);
                    if (!flat.get(k + 1).isInt()) throw new BadRequest(at + ": partition numbers must be integers");
                    int partition = flat.get(k + 1).asInt();
                    Uuid id = metadata.idOrDerived(topic); // a deleted topic's partitions keep an id
                    Set<Integer> partitions = assigned.get(id);
                    if (partitions == null) {
                        partitions = ordered.contains(memberId) ? new LinkedHashSet<>() : new HashSet<>();
                        assigned.put(id, partitions);
                    }
                    partitions.add(partition);
                    String previous = inverted.computeIfAbsent(id, x -> new HashMap<>()).put(partition, memberId);
                    if (previous != null && !previous.equals(memberId))
                        throw new BadRequest(where + ": partition " + topic + "-" + partition + " is assigned to both '" + previous + "' and '" + memberId + "'");
                }
            }
            members.put(memberId, new MemberSubscriptionAndAssignmentImpl(
                Optional.ofNullable(textOrNull(node, "rack", at)),
                Optional.ofNullable(textOrNull(node, "instance_id", at)),
                new TopicIds(topics, metadata),
                new Assignment(assigned)));
        }
        SubscriptionType type = group.hasNonNull("subscription_type")
            ? SubscriptionType.valueOf(text(group, "subscription_type", where))
            : ModernGroup.subscriptionType(subscribedTopicNames, members.size());

        long start = System.nanoTime();
        GroupAssignment assignment = assignor.assign(new GroupSpecImpl(members, type, inverted), metadata);
        double seconds = (System.nanoTime() - start) / 1e9;

        ObjectNode result = JSON.objectNode();
        result.put("subscription_type", type.name());
        ArrayNode byMember = result.putArray("assignment");
        for (Map.Entry<String, MemberAssignment> e : new TreeMap<>(assignment.members()).entrySet()) {
            // Sorted by topic name and partition: Kafka's answer is a map of sets, with no order.
            TreeMap<String, TreeSet<Integer>> sorted = new TreeMap<>();
            for (Map.Entry<Uuid, Set<Integer>> t : e.getValue().partitions().entrySet())
                sorted.computeIfAbsent(metadata.nameOf(t.getKey()), x -> new TreeSet<>()).addAll(t.getValue());
            byMember.addArray().add(e.getKey()).add(out.flat(sorted));
        }
        result.put("assign_seconds", seconds);
        return result;
    }

    /** The topic-name table of one response; partitions refer to names by index. */
    private static final class Names {
        final ArrayNode json = JSON.arrayNode();
        private final Map<String, Integer> index = new HashMap<>();

        ArrayNode flat(Map<String, TreeSet<Integer>> partitions) {
            ArrayNode out = JSON.arrayNode();
            for (Map.Entry<String, TreeSet<Integer>> e : partitions.entrySet()) {
                Integer i = index.get(e.getKey());
                if (i == null) {
                    i = index.size();
                    index.put(e.getKey(), i);
                    json.add(e.getKey());
                }
                for (int p : e.getValue()) {
                    out.add(i);
                    out.add(p);
                }
            }
            return out;
        }
    }

    // ---------------------------------------------------------------- JSON helpers

    private static String nameAt(JsonNode n, String[] names, String where) {
        if (!n.isInt() || n.asInt() < 0 || n.asInt() >= names.length)
            throw new BadRequest(where + ": " + n + " is not a name index");
        return names[n.asInt()];
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

    private static String[] strings(JsonNode value, String where) {
        if (!value.isArray()) throw new BadRequest(where + ": must be a list of strings");
        String[] out = new String[value.size()];
        for (int i = 0; i < out.length; i++) {
            if (!value.get(i).isTextual()) throw new BadRequest(where + ": must be a list of strings");
            out[i] = value.get(i).asText();
        }
        return out;
    }
}
