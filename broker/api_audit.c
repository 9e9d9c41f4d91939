/*
 * API-8: recent audit records through auditd.  Not built yet (issue 6):
 * the route answers 501 "not-implemented".
 */
#include "broker.h"

void
api_audit(struct evhttp_request *req, const struct api_params *p)
{
	send_error(req, 501, "not-implemented");
}
