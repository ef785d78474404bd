"""Who approves what, as the moderation page shows it: each agent's rule per source."""

from dataclasses import dataclass

from apps.episodic.approval import AUTOMATIC, ORIGINS
from apps.memconfig.selectors import config_effective
from apps.tenancy.selectors import agent_list


@dataclass(frozen=True)
class AgentRules:
    agent: object
    required: bool  # episodic_approval_required: off approves every source
    automatic: list[str]  # the sources (ORIGINS' names) approved on arrival


def approval_rules() -> dict:
    """Return the sources' names and, per agent, which of them are approved on arrival."""
    sources = [(key, what) for key, (setting, what) in ORIGINS.items() if setting]
    agents = []
    for agent in agent_list():
        config = config_effective(agent=agent)
        automatic = [key for key, _ in sources if config[ORIGINS[key][0]] == AUTOMATIC]
        agents.append(AgentRules(agent, config["episodic_approval_required"], automatic))
    return {"sources": sources, "agents": agents}
