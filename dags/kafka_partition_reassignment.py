"""Partition reassignment on one Kafka cluster, from the Airflow UI: replication-factor change, broker
decommission, replica balance.

Declares only: the DAG's shape is `kafka_ops.airflow.remediation_dag`, its form
`kafka_ops.planning.request.REASSIGNMENT_FORM`, its task bodies `kafka_ops.airflow.remediation_tasks`.
"""

from __future__ import annotations

from datetime import timedelta

from kafka_ops.airflow.remediation_dag import remediation_dag
from kafka_ops.planning.request import REASSIGNMENT_FORM

DOC_MD = """
### Kafka partition reassignment

**What it does.** Moves replicas between brokers of one cluster, with the fewest moves, batched and
throttled. The actions:

* **Replication factor**: change the replication factor of the chosen topics (fill *Topics*, one
  per line, or *Topic pattern*, and *Target replication factor*). Going up, existing replicas stay
  put and new ones go to other racks first.
* **Decommission brokers**: move every replica off the brokers in *Brokers* (e.g. `[3]`).
* **Replica balance**: even out replicas per broker and rack; brokers in *Brokers* are drained.
* **Log dir balance**: on brokers with several log dirs (JBOD), move replicas between a broker's
  dirs to even their use (no replica changes broker; never onto a dir in error). *Brokers* picks
  the brokers (empty: all). Executed with AlterReplicaLogDirs through the cluster's Kafka connection,
  throttled by `replica.alter.log.dirs.io.max.bytes.per.second`.
* **Roll back** / **Finish** a plan that was cancelled or failed half way (fill *Plan to roll back or
  finish* with its plan id): from a fresh snapshot, the moves that put its moved partitions back to
  the plan's base, or its partitions still at the base on to the plan's target. Reviewed and
  executed like any plan (the new plan has its own plan id).

**How to use it: dry run, review, execute.** Nothing is written to a cluster unless you ask for it
with a plan you reviewed.

1. *Trigger* with the form and leave **Dry run** on. Task `plan` takes a fresh snapshot of the
   cluster from ZooKeeper, validates its integrity (it never plans on an untrusted snapshot), makes
   the plan and saves it in the lake.
2. *Review*: open the log of task `plan`. It shows the plan id, the base snapshot, every move
   (replicas before → after), the number of moves and the lower bound (fewest moves possible), the
   batches and throttle, what was skipped and why, replicas and leaders per broker before → after,
   and the paths of the plan files: `reassignment.json` (what `kafka-reassign-partitions --execute`
   would take) and `rollback.json` (puts every touched partition back as it was; keep it).
3. *Execute*: trigger again with **Dry run** off and **Plan id** = the plan id from step 2 (same
   cluster and action; the other "what" fields may stay as they were or be left empty). Task
   `execute` loads that plan (it never re-plans) and runs it batch by batch: throttles set, the
   batch submitted, waited on until every new replica is in the ISR, verified; throttles removed at
   the end. *Throttle* and *Batch size* pace it.

**Safety.** `execute` refuses, writing nothing to the cluster, unless: writes are enabled for the
cluster in the kafka-ops settings (`writes_enabled = true`; off by default); the plan's base
snapshot passed integrity validation; the live cluster still has the replica lists the plan was
made from (otherwise make a new plan); no other reassignment or election is in flight; the
controller has not changed recently; every receiving broker is registered. Every write and refusal
is a row in the lake table `remediation_audit` (who triggered the run, the plan id, the batch).

**When it fails.** `validate_params` failed: a Param is invalid; its log names it (e.g.
`Param 'replication_factor': must be at least 1, got 0`). Nothing ran. `plan` failed: the snapshot
was untrusted, or the request cannot be planned (the message names the Param). `execute` failed:
read its message; a refusal (`refused (<check>)`) wrote nothing; a stuck batch stays in flight with
its throttles. `execute` is never retried automatically: trigger it again with the same plan id to
resume (batches already done are not applied twice).

**Stopping it.** DAG `kafka_remediation_cancel` with the plan id cancels the moves in flight, stops
a running `execute` before its next write and removes the throttles; completed batches stay: roll
them back (or finish the plan) with the **Roll back** / **Finish** actions here.
"""


kafka_partition_reassignment = remediation_dag(REASSIGNMENT_FORM, DOC_MD, execute_timeout=timedelta(hours=12))
