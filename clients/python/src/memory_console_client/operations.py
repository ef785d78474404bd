"""Every API operation the client calls: its operation id, method and path in the OpenAPI
schema (/api/schema/), and the body fields and query parameters the client may send.

The client sends nothing that is not declared here (Transport.call checks), and the
repository's tests check this table against the server's schema, so a change of the API that
breaks the client fails a test.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Operation:
    id: str
    method: str
    path: str
    fields: tuple[str, ...] = ()  # JSON body fields
    params: tuple[str, ...] = ()  # query parameters

    def url(self, **path_values: str) -> str:
        return self.path.format(**path_values)


_PAGE = ("limit", "cursor")
_THREAD_IN = ("resource_id", "channel", "external_id", "title", "metadata")
_MESSAGE = "messages"  # a list of {role, content, kind, name, payload, metadata, ...}

OPERATIONS: dict[str, Operation] = {
    op.id: op
    for op in [
        Operation(
            "threads_list", "GET", "/api/v1/threads", params=("resource_id", "channel", *_PAGE)
        ),
        Operation("threads_resolve_or_create", "POST", "/api/v1/threads", fields=_THREAD_IN),
        Operation("threads_read", "GET", "/api/v1/threads/{thread_id}"),
        Operation("threads_update", "PATCH", "/api/v1/threads/{thread_id}", ("title", "metadata")),
        Operation("threads_delete", "DELETE", "/api/v1/threads/{thread_id}"),
        Operation(
            "messages_list",
            "GET",
            "/api/v1/threads/{thread_id}/messages",
            params=("after_seq", "before_seq", "limit"),
        ),
        Operation("messages_append", "POST", "/api/v1/threads/{thread_id}/messages", (_MESSAGE,)),
        Operation(
            "context_build", "POST", "/api/v1/threads/{thread_id}/context", ("query", "max_tokens")
        ),
        Operation("contexts_list", "GET", "/api/v1/threads/{thread_id}/contexts", params=_PAGE),
        Operation("context_read", "GET", "/api/v1/contexts/{context_id}"),
        Operation(
            "runs_open",
            "POST",
            "/api/v1/runs",
            ("channel", "external_id", "resource_id", "name", "metadata"),
        ),
        Operation("runs_start", "POST", "/api/v1/threads/{thread_id}/runs", ("name", "metadata")),
        Operation("runs_read", "GET", "/api/v1/runs/{run_id}"),
        Operation(
            "runs_finish",
            "POST",
            "/api/v1/runs/{run_id}/finish",
            ("status", "summary", "error", "metadata"),
        ),
        Operation(
            "search",
            "POST",
            "/api/v1/search",
            (
                "query",
                "scopes",
                "thread_id",
                "resource_id",
                "knowledge_base",
                "top_k",
                "message_range",
            ),
        ),
        Operation(
            "episodic_list",
            "GET",
            "/api/v1/episodic",
            params=("resource_id", "status", "kind", *_PAGE),
        ),
        Operation(
            "episodic_create",
            "POST",
            "/api/v1/episodic",
            (
                "content",
                "resource_id",
                "kind",
                "source",
                "evidence",
                "thread_id",
                "message_id",
                "metadata",
            ),
        ),
        Operation("episodic_read", "GET", "/api/v1/episodic/{entry_id}"),
        Operation(
            "episodic_update", "PATCH", "/api/v1/episodic/{entry_id}", ("content", "version")
        ),
        Operation("episodic_delete", "DELETE", "/api/v1/episodic/{entry_id}"),
        Operation(
            "episodic_recall", "POST", "/api/v1/episodic/recall", ("query", "resource_id", "top_k")
        ),
        Operation("tools_list", "GET", "/api/v1/tools"),
        Operation("tools_call", "POST", "/api/v1/tools/call", ("name", "arguments")),
        Operation("config_read", "GET", "/api/v1/config"),
        # Project-admin keys only (create_agent --admin).
        Operation(
            "admin_config_update",
            "PATCH",
            "/api/v1/config",
            ("level", "agent", "version", "values", "note"),
        ),
        Operation(
            "admin_config_level_read", "GET", "/api/v1/config/level", params=("level", "agent")
        ),
        Operation(
            "admin_config_versions_list",
            "GET",
            "/api/v1/config/versions",
            params=("level", "agent", *_PAGE),
        ),
        Operation(
            "admin_config_rollback",
            "POST",
            "/api/v1/config/rollback",
            ("level", "agent", "to_version"),
        ),
        Operation("admin_webhooks_list", "GET", "/api/v1/webhooks", params=_PAGE),
        Operation("admin_webhooks_create", "POST", "/api/v1/webhooks", ("name", "url", "active")),
        Operation("admin_webhooks_read", "GET", "/api/v1/webhooks/{webhook_id}"),
        Operation(
            "admin_webhooks_update",
            "PATCH",
            "/api/v1/webhooks/{webhook_id}",
            ("name", "url", "active"),
        ),
        Operation("admin_webhooks_delete", "DELETE", "/api/v1/webhooks/{webhook_id}"),
        Operation("admin_webhook_secret_read", "GET", "/api/v1/webhooks/secret"),
        Operation("admin_webhook_secret_rotate", "POST", "/api/v1/webhooks/secret/rotate"),
    ]
}
