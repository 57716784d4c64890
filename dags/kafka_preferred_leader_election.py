"""Preferred-leader election (or leader reorder + election) on one Kafka cluster, from the Airflow UI.

Declares only: the DAG's shape is `kafka_ops.airflow.remediation_dag`, its form
`kafka_ops.planning.request.ELECTION_FORM`, its task bodies `kafka_ops.airflow.remediation_tasks`.
"""

from __future__ import annotations

from datetime import timedelta

from kafka_ops.airflow.remediation_dag import remediation_dag
from kafka_ops.planning.request import ELECTION_FORM

DOC_MD = """
### Kafka preferred-leader election

**What it does.** Gives partition leadership back to each partition's *preferred* replica (its
first replica) on one cluster, e.g. after a broker restart left its partitions led elsewhere.
Two actions:

* **Preferred-leader election**: elect the preferred replica wherever it is alive and in the ISR
  (partitions it cannot fix are listed as skipped, with why).
* **Leader reorder + election**: when the preferred leaders themselves are uneven, reorder replica
  lists so each broker is preferred for its share (no data is copied), then elect.

**How to use it: dry run, review, execute.** Nothing is written to a cluster unless you ask for it
with a plan you reviewed.

1. *Trigger* with the form: cluster, action, optionally topics (one per line) or a topic pattern
   (empty: every topic). Leave **Dry run** on. Task `plan` takes a fresh snapshot of the cluster from
   ZooKeeper, validates its integrity (it never plans on an untrusted snapshot), makes the plan and
   saves it in the lake.
2. *Review*: open the log of task `plan`. It shows the plan id, the base snapshot, every election
   (leader before → preferred), what was skipped and why, leaders per broker before → after, and
   the paths of the plan files (`election.json` is the file `kafka-leader-election
   --path-to-json-file` takes). The XCom of `plan` holds the same summary.
3. *Execute*: trigger again with **Dry run** off and **Plan id** = the plan id from step 2 (same
   cluster and action; other fields may stay as they were or be left empty). Task `execute` loads
   that plan (it never re-plans) and runs it through the remediation executor.

**Safety.** `execute` refuses, writing nothing to the cluster, unless: writes are enabled for the
cluster in the kafka-ops settings (`writes_enabled = true`; off by default); the plan's base
snapshot passed integrity validation; the live cluster still has the replica lists the plan was
made from (otherwise make a new plan); no reassignment or election is in flight; the controller
has not changed recently. Every write and refusal is a row in the lake table `remediation_audit`
(who triggered the run, the plan id, what was done).

**When it fails.** `validate_params` failed: a Param is invalid; its log names it (e.g.
`Param 'plan_id': required when dry_run is false`). Nothing ran. `plan` failed: the snapshot was
untrusted, or the request cannot be planned (the message names the Param). `execute` failed: read
its message; a refusal (`refused (<check>)`) wrote nothing, a failure says which partitions did not
end as planned. `execute` is never retried automatically: trigger it again with the same plan id
to resume where it stopped.
"""


kafka_preferred_leader_election = remediation_dag(ELECTION_FORM, DOC_MD, execute_timeout=timedelta(hours=1))
