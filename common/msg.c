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
	default:
		return "unknown";
	}
}
