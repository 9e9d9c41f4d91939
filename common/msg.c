/*
 * Names of wire message types, for log lines only.
 */
#include "msg.h"

const char *
msg_name(unsigned int type)
{
	switch (type) {
	case MSG_ERROR:
		return "error";
	case MSG_STATUS:
		return "status";
	case MSG_STATUS_OK:
		return "status-ok";
	case MSG_PEER_FD:
		return "peer-fd";
	case MSG_SHUTDOWN:
		return "shutdown";
	case MSG_PEER_BAD:
		return "peer-bad";
	case MSG_BROKER_CONFIG:
		return "broker-config";
	case MSG_LOGIN_USED:
		return "login-used";
	case MSG_LOGIN_USED_OK:
		return "login-used-ok";
	case MSG_HEALTH:
		return "health";
	case MSG_HEALTH_OK:
		return "health-ok";
	case MSG_AUDIT_RECORD:
		return "audit-record";
	case MSG_AUDIT_RECORD_OK:
		return "audit-record-ok";
	case MSG_AUDIT_TAIL:
		return "audit-tail";
	case MSG_AUDIT_TAIL_OK:
		return "audit-tail-ok";
	case MSG_VAULT_CHAT_NOTE:
		return "vault-chat-note";
	case MSG_VAULT_CHAT_NOTE_OK:
		return "vault-chat-note-ok";
	case MSG_VAULT_MISSION_NOTE:
		return "vault-mission-note";
	case MSG_VAULT_MISSION_NOTE_OK:
		return "vault-mission-note-ok";
	case MSG_VAULT_READ:
		return "vault-read";
	case MSG_VAULT_READ_OK:
		return "vault-read-ok";
	case MSG_VAULT_LIST:
		return "vault-list";
	case MSG_VAULT_LIST_OK:
		return "vault-list-ok";
	case MSG_AGENT_LIST:
		return "agent-list";
	case MSG_AGENT_LIST_OK:
		return "agent-list-ok";
	case MSG_AGENT_GET:
		return "agent-get";
	case MSG_AGENT_GET_OK:
		return "agent-get-ok";
	case MSG_RUN_START:
		return "run-start";
	case MSG_RUN_START_OK:
		return "run-start-ok";
	case MSG_RUN_EVENT:
		return "run-event";
	case MSG_RUN_CANCEL:
		return "run-cancel";
	case MSG_RUN_CANCEL_OK:
		return "run-cancel-ok";
	case MSG_ACTION_RUN:
		return "action-run";
	case MSG_ACTION_RUN_OK:
		return "action-run-ok";
	case MSG_RUN_CREDIT:
		return "run-credit";
	case MSG_GATE_CHECK:
		return "gate-check";
	case MSG_GATE_VERDICT:
		return "gate-verdict";
	case MSG_APPROVAL_LIST:
		return "approval-list";
	case MSG_APPROVAL_LIST_OK:
		return "approval-list-ok";
	case MSG_APPROVAL_DECIDE:
		return "approval-decide";
	case MSG_APPROVAL_DECIDE_OK:
		return "approval-decide-ok";
	case MSG_MISSION_LIST:
		return "mission-list";
	case MSG_MISSION_LIST_OK:
		return "mission-list-ok";
	case MSG_MISSION_RUN:
		return "mission-run";
	case MSG_MISSION_RUN_OK:
		return "mission-run-ok";
	case MSG_EGRESS_OPEN:
		return "egress-open";
	case MSG_EGRESS_OPEN_OK:
		return "egress-open-ok";
	case MSG_EGRESS_CLOSE:
		return "egress-close";
	case MSG_EGRESS_CONN:
		return "egress-conn";
	default:
		return "unknown";
	}
}
