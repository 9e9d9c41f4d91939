/*
 * API-2 ... API-5: agents, runs and Control Room actions.  Not built yet
 * (issue 3): every route answers 501 "not-implemented", never a pretend
 * result.
 */
#include "broker.h"

void
api_agents_list(struct evhttp_request *req, const struct api_params *p)
{
	send_error(req, 501, "not-implemented");
}

void
api_agent_get(struct evhttp_request *req, const struct api_params *p)
{
	send_error(req, 501, "not-implemented");
}

void
api_agent_run(struct evhttp_request *req, const struct api_params *p)
{
	send_error(req, 501, "not-implemented");
}

void
api_run_cancel(struct evhttp_request *req, const struct api_params *p)
{
	send_error(req, 501, "not-implemented");
}

void
api_agent_action(struct evhttp_request *req, const struct api_params *p)
{
	send_error(req, 501, "not-implemented");
}

void
agents_run_event_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	/* No run can be started yet, so no event is expected. */
}
