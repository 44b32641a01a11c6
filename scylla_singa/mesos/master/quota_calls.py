"""The operator API's quota calls on the master: UPDATE_QUOTA, the legacy SET_QUOTA and REMOVE_QUOTA, and
GET_QUOTA (also the v0 `GET /quota`), with Mesos 1.12's checks and texts.

An update is checked whole before anything changes: each QuotaConfig
(quota.py), a limit below what the role's tasks already hold, and the total
guarantees against the registered agents' capacity (the last two waived by
`force`, as in Mesos). Then the allocator gets the new quotas, and offers
that may break them are rescinded (best effort, as Mesos: the role's own
offers for a limit, every outstanding offer for a guarantee, all offered
again at once under the new quotas).

Quotas are kept in the master's store (master_store.py), as its role
weights are, so a restarted master keeps them, as Mesos's registry does; a
master elected on another machine has its own store.
"""

from __future__ import annotations

from typing import Any

from scylla_singa.mesos.api.resources import Resources
from .master_core import Master
from .operator_views import total
from .quota import Quota, QuotaInvalid, quota_from_config, quota_from_request, sum_amounts

JsonDict = dict[str, Any]


class QuotaRefused(Exception):
    """A quota call refused: HTTP status and Mesos's text."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def update_quota(m: Master, body: JsonDict) -> None:
    """UPDATE_QUOTA: set each role's guarantees and limits (both empty: no guarantee, no limit)."""
    updates: dict[str, Quota] = {}
    for config in body.get("quota_configs") or ():
        role = str(config.get("role") or "")
        if "/" in role:
            raise QuotaRefused(400, f"Updating quota on nested role '{role}' is not supported yet")
        try:
            role, quota = quota_from_config(config)
        except QuotaInvalid as exc:
            raise QuotaRefused(400, f"Invalid QuotaConfig: {exc}") from None
        updates[role] = quota
    _apply(m, updates, bool(body.get("force")))


def set_quota(m: Master, body: JsonDict) -> None:
    """SET_QUOTA (deprecated in Mesos): a guarantee that is also the limit, for a role without quota."""
    request = body.get("quota_request") or {}
    try:
        role, quota = quota_from_request(request)
    except QuotaInvalid as exc:
        raise QuotaRefused(400, f"Failed to validate set quota request: {exc}") from None
    if role in m.quotas:
        raise QuotaRefused(400, f"Failed to validate set quota request: Cannot set quota for role '{role}' "
                                "which already has quota")
    if not quota.guarantees:
        raise QuotaRefused(400, "Failed to validate set quota request: QuotaInfo with empty 'guarantee'")
    _apply(m, {role: quota}, bool(request.get("force")))


def remove_quota(m: Master, body: JsonDict) -> None:
    """REMOVE_QUOTA (deprecated in Mesos): the role goes back to no quota."""
    role = str(body.get("role") or "")
    if role not in m.quotas:   # (Apache Mesos 1.12's master aborts here)
        raise QuotaRefused(400, f"Failed to remove quota: Role '{role}' has no quota set")
    _apply(m, {role: Quota()}, force=True)
    del m.quotas[role]
    m.save_operator_settings()


def quota_status(m: Master) -> JsonDict:
    """GET_QUOTA's QuotaStatus: every role's QuotaConfig, and the legacy QuotaInfo of those with guarantees."""
    configs = [m.quotas[role].config(role) for role in sorted(m.quotas)]
    infos = [{"role": role, **({"guarantee": Resources(m.quotas[role].guarantees).to_json()}
                               if m.quotas[role].guarantees else {})} for role in sorted(m.quotas)]
    return {"infos": infos, "configs": configs} if configs else {}


def role_consumed(m: Master, role: str) -> Resources:
    """What the role's tasks hold (Mesos's consumed quota, without reservations, which do not exist here)."""
    return total(t.resources for f in m.frameworks.values() if f.role == role for t in f.tasks.values())


def _apply(m: Master, updates: dict[str, Quota], force: bool) -> None:
    for role, quota in updates.items():
        consumed = role_consumed(m, role)
        over = {k: v for k, v in consumed.scalars.items() if v > quota.limits.get(k, float("inf")) + 1e-9}
        if over and not force:
            raise QuotaRefused(400, f"Invalid QuotaConfig: Role '{role}' is already consuming "
                                    f"'{_show(consumed.scalars)}'; this is more than the requested limits "
                                    f"'{_show(quota.limits)}' (use 'force' flag to bypass this check)")
    after = {**m.quotas, **updates}
    guarantees = sum_amounts(q.guarantees for q in after.values())
    capacity = total(a.total for a in m.agent_registry.agents.values()).scalars
    if any(v > capacity.get(k, 0.0) + 1e-9 for k, v in guarantees.items()) and not force:
        raise QuotaRefused(400, f"Invalid QuotaConfig: total quota guarantees '{_show(guarantees)}' exceed "
                                f"cluster capacity '{_show(capacity)}' (use 'force' flag to bypass this check)")
    for role, quota in updates.items():
        m.quotas[role] = quota   # a default quota stays listed, as in Mesos (REMOVE_QUOTA forgets the role)
        m.allocator.set_quota(role, quota)
    guaranteed = any(q.guarantees for q in updates.values())
    for offer in list(m.offers.values()):
        fw = m.frameworks.get(offer.framework_id)
        if guaranteed or (fw is not None and fw.role in updates):
            m.remove_offer(offer.id)
    m.save_operator_settings()
    m.schedule_allocation()


def _show(amounts: dict[str, float]) -> str:
    return "; ".join(f"{k}:{v:g}" for k, v in sorted(amounts.items())) or "{}"
