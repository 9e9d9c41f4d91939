/*
 * API-6: vault listing and note reading through vaultd.  Not built yet
 * (issue 5): the routes answer 501 "not-implemented".
 */
#include "broker.h"

void
api_vault_notes(struct evhttp_request *req, const struct api_params *p)
{
	send_error(req, 501, "not-implemented");
}

void
api_vault_note(struct evhttp_request *req, const struct api_params *p)
{
	send_error(req, 501, "not-implemented");
}
