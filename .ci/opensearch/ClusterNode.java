import org.codelibs.opensearch.runner.OpenSearchRunner;

/**
 * One node of the three-node test cluster, in a JVM of its own, so that a test can hang it
 * (SIGSTOP), resume it (SIGCONT) or kill it without touching the other two. OpenSearchRunner
 * starts every node of a cluster in one JVM, so each JVM here starts a "cluster" of one node and
 * is told where the other two are.
 *
 * Usage: java -cp <runner classpath> ClusterNode.java <1|2|3> <home folder>
 */
public class ClusterNode {
    static final int HTTP_BASE = 9210;
    static final int TRANSPORT_BASE = 9310;

    public static void main(String[] args) throws Exception {
        final int n = Integer.parseInt(args[0]);
        final String home = args[1];
        final OpenSearchRunner runner = new OpenSearchRunner();
        runner.onBuild((index, settings) -> {
            settings.put("cluster.name", "thaw-three-nodes");
            settings.put("node.name", "node-" + n);
            settings.put("http.port", String.valueOf(HTTP_BASE + n));
            settings.put("transport.port", String.valueOf(TRANSPORT_BASE + n));
            // The runner makes a lone node a single-node cluster unless discovery is set.
            settings.put("discovery.type", "zen");
            settings.putList("discovery.seed_hosts",
                    "127.0.0.1:" + (TRANSPORT_BASE + 1),
                    "127.0.0.1:" + (TRANSPORT_BASE + 2),
                    "127.0.0.1:" + (TRANSPORT_BASE + 3));
            settings.putList("cluster.initial_cluster_manager_nodes", "node-1", "node-2", "node-3");
            // A hung node leaves the cluster after about 3 s instead of 30: the tests that hang one
            // wait for that, and every cluster-state update waits for a hung member until then.
            settings.put("cluster.fault_detection.follower_check.interval", "500ms");
            settings.put("cluster.fault_detection.follower_check.timeout", "1s");
            settings.put("cluster.fault_detection.follower_check.retry_count", "2");
            settings.put("cluster.fault_detection.leader_check.interval", "500ms");
            settings.put("cluster.fault_detection.leader_check.timeout", "1s");
            settings.put("cluster.fault_detection.leader_check.retry_count", "2");
            settings.put("cluster.publish.timeout", "5s");
            settings.put("cluster.max_shards_per_node", "20000");
            // The nodes share the machine's disk with all the suite writes: past the low watermark
            // (85% of the disk used) no replica is placed, and the tests that wait for green hang.
            settings.put("cluster.routing.allocation.disk.threshold_enabled", "false");
        });
        runner.build("-basePath", home, "-numOfNode", "1");
        Thread.currentThread().join();
    }
}
