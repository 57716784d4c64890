"""How a request paces the execution of a plan: batch size, throttle (or the time budget that sets
it) and the cluster's controller quiet period, as `ExecutionOptions`, and as the `Pacing` a dry run's
review shows (`planning.review`)."""

from __future__ import annotations

from kafka_ops.planning.plan import Plan
from kafka_ops.planning.request import MIN_THROTTLE, RemediationRequest
from kafka_ops.planning.review import Pacing
from kafka_ops.remediation.batch_runner import ExecutionOptions
from kafka_ops.remediation.batching import chunk_elections, split_moves
from kafka_ops.remediation.log_dir_moves import split_dir_moves
from kafka_ops.remediation.throttle_budget import BudgetThrottle, throttle_for_budget


def execution_options(request: RemediationRequest, plan_: Plan | None = None) -> ExecutionOptions:
    """The executor's pacing: the run's batch size and throttle (from `plan_`'s bytes and the time
    budget when the run gives one), the cluster's controller quiet period."""
    return ExecutionOptions(
        batch_max_partitions=request.batch_size,
        election_batch_size=request.batch_size,
        throttle_bytes_per_s=throttle_of(request, plan_),
        controller_quiet_s=request.cluster.remediation_controller_quiet_seconds,
    )


def budget_throttle(request: RemediationRequest, plan_: Plan) -> BudgetThrottle | None:
    """The throttle from the run's time budget and the plan's bytes; None without a budget."""
    if request.time_budget_minutes is None:
        return None
    return throttle_for_budget(plan_, request.time_budget_minutes, request.cluster.capacity, minimum=MIN_THROTTLE)


def throttle_of(request: RemediationRequest, plan_: Plan | None) -> int | None:
    """The throttle to set: from the time budget when given (and a plan to size), else the Param's."""
    budget = None if plan_ is None else budget_throttle(request, plan_)
    return request.throttle_bytes_per_s if budget is None else budget.rate


def batch_count(plan_: Plan, request: RemediationRequest) -> int:
    """How many reassignment batches the executor will run the plan in, paced as `request` asks."""
    options = execution_options(request)
    if plan_.dir_moves:
        return len(split_dir_moves(plan_.dir_moves, options.batch_max_partitions))
    return len(split_moves(plan_.reassignments, options.batch_max_partitions, options.batch_max_moves_per_broker))


def election_requests(plan_: Plan, request: RemediationRequest) -> int:
    """How many election requests the executor will send for the plan."""
    return len(chunk_elections(plan_.elections, execution_options(request).election_batch_size))


def pacing_of(plan_: Plan, request: RemediationRequest) -> Pacing:
    """How the executor will run `plan_` for `request`, for the plan's review."""
    return Pacing(batch_count(plan_, request), election_requests(plan_, request), throttle_text(plan_, request))


def throttle_text(plan_: Plan, request: RemediationRequest) -> str:
    """The throttle the plan's batches run under, in words."""
    budget = budget_throttle(request, plan_) if plan_.reassignments or plan_.dir_moves else None
    if budget is None:
        return f"{request.throttle_bytes_per_s} B/s" if request.throttle_bytes_per_s else "none"
    late = (f"; capped by the network capacity of broker(s) {list(budget.capped)}: about "
            f"{budget.seconds / 60:.0f} min, over the budget") if budget.capped else ""  # fmt: skip
    return (f"{budget.rate} B/s (time budget {request.time_budget_minutes:g} min; busiest broker "
            f"{budget.busiest}{late})")  # fmt: skip
