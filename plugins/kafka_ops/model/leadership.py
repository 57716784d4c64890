"""Why a partition is not led by its preferred replica: the reasons the leader-balance detector reports
and the preferred-leader election planner skips a partition for, in the same words."""

REASSIGNING = "partition is being reassigned"
PREFERRED_DOWN = "preferred replica is down"
PREFERRED_NOT_IN_ISR = "preferred replica is not in the ISR"
