/* jobs.c -- a job's presence on this switch and up a fabric: whether it
 * has ranks here or below is told to the parent once per job (LINK_JOIN /
 * LINK_LEAVE, told again until confirmed, never per rank), a child's
 * news of a job is confirmed once the top knows it, the hosts that waited
 * are welcomed (or refused), and a job nothing holds any more goes with
 * its rows and set-ups. */
#include "config.h"

#include <string.h>

#include "sw.h"

/* Nothing holds the job here any more: it goes once the parent, if it
 * was told of the job, has confirmed it is gone. */
void sw_job_done(struct acis_sw *sw, uint32_t j)
{
    struct sw_job *job = &sw->jobs[j];
    if (!job->in_use || sw_job_present(job))
        return;
    if (sw->up && job->asked) {
        sw_link_job(sw, j);              /* LINK_LEAVE, until confirmed */
        return;
    }
    sw_job_release(sw, j);
}

/* The job leaves the switch: its rows and set-ups go with it. */
void sw_job_release(struct acis_sw *sw, uint32_t job)
{
    for (uint32_t r = 0; r < sw->o.tables; r++)
        if (sw->cts[r].in_use && sw->cts[r].job == job)
            sw_ct_free(sw, r);
    sw_setup_drop_job(sw, job);
    for (uint32_t p = 0; p < sw->o.ports; p++)
        if (sw->ports[p].held && sw->ports[p].job == job)
            sw->ports[p].held = 0;               /* no row names them now */
    sw->jobs[job].in_use = 0;
    SWC(sw, jobs)--;
}

/* Tell the parent whether job j is here or below (repeated by the tick
 * until the parent's confirmation matches). */
void sw_link_job(struct acis_sw *sw, uint32_t j)
{
    struct sw_job *job = &sw->jobs[j];
    if (!sw->up)
        return;
    uint8_t p[ACIS_LINK_JOIN_LEN];
    struct acis_hdr h = { .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
                          .job_key = job->key, .src = ACIS_NO_RANK };
    acis_put32(p, job->size);
    job->asked |= (uint8_t)sw_job_present(job);
    if (sw_job_present(job))
        sw_link_up(sw, ACIS_K_LINK_JOIN, &h, p, sizeof p);
    else
        sw_link_up(sw, ACIS_K_LINK_LEAVE, &h, NULL, 0);
}

/* Jobs whose presence the parent has not confirmed are told again: one
 * message per job, never per rank. */
void sw_link_tick(struct acis_sw *sw)
{
    for (uint32_t j = 0; j < sw->size.jobs; j++) {
        const struct sw_job *job = &sw->jobs[j];
        int here = sw_job_present(job);
        if (job->in_use && ((here && !job->told) || (!here && job->asked)))
            sw_link_job(sw, j);
    }
}

/* Confirm to the link on port the job's presence (kind), or refuse it. */
static void confirm(struct acis_sw *sw, uint32_t port, unsigned kind, uint64_t key,
                    uint32_t world, int error)
{
    uint8_t p[ACIS_LINK_JOIN_LEN];
    struct acis_hdr h = { .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
                          .opcode = ACIS_OPC(kind, ACIS_ALG_FLAT),
                          .flags = (uint16_t)(ACIS_F_RESULT | (error ? ACIS_F_ERROR : 0)),
                          .job_key = key, .src = ACIS_NO_RANK };
    acis_put32(p, world);
    sw_link_send(sw, port, &h, p, kind == ACIS_K_LINK_JOIN ? sizeof p : 0);
}

/* The top knows job j (or refused it): the hosts and links that waited
 * for that hear it. */
static void settle(struct acis_sw *sw, uint32_t j, int refused)
{
    struct sw_job *job = &sw->jobs[j];
    for (uint32_t q = 0; q < sw->o.ports; q++) {
        const struct sw_port *sp = &sw->ports[q];
        if (sp->in_use && !sp->link && sp->waiting && sp->job == j) {
            if (refused)
                sw_refuse_host(sw, q, ACIS_ST_NO_PORT);
            else
                sw_welcome_host(sw, q);
        } else if (sp->in_use && sp->link && sw_bit(job->unconfirmed, q)) {
            sw_bit_clear(job->unconfirmed, q);
            confirm(sw, q, ACIS_K_LINK_JOIN, job->key, job->size, refused);
        }
    }
    if (refused) {                               /* the links below drop it too */
        memset(job->links, 0, sw->words * sizeof(uint64_t));
        job->nlinks = 0;
    }
}

/* LINK_JOIN / LINK_LEAVE from the switch on port: job h->job_key has
 * ranks below it, or no longer. */
void sw_job_moved(struct acis_sw *sw, uint32_t port, const struct acis_hdr *h,
                      const uint8_t *payload)
{
    int join = ACIS_OPC_KIND(h->opcode) == ACIS_K_LINK_JOIN;
    uint32_t world = join ? acis_get32(payload) : 0;
    uint32_t j = sw_find_job(sw, h->job_key);
    if (!join) {
        if (j != SW_NONE && sw_bit(sw->jobs[j].links, port)) {
            sw_bit_clear(sw->jobs[j].links, port);
            sw_bit_clear(sw->jobs[j].unconfirmed, port);
            sw->jobs[j].nlinks--;
        }
        confirm(sw, port, ACIS_K_LINK_LEAVE, h->job_key, 0, 0);
        if (j != SW_NONE)
            sw_job_done(sw, j);
        return;
    }
    if (j == SW_NONE)
        j = sw_job_new(sw, h->job_key, world);
    if (j == SW_NONE || sw->jobs[j].size != world) {
        SWC(sw, drop_foreign)++;                 /* no room, or another size */
        confirm(sw, port, ACIS_K_LINK_JOIN, h->job_key, world, 1);
        if (j != SW_NONE)
            sw_job_done(sw, j);
        return;
    }
    struct sw_job *job = &sw->jobs[j];
    int was = sw_job_present(job);
    if (!sw_bit(job->links, port)) {
        sw_bit_set(job->links, port);
        job->nlinks++;
    }
    if (job->told) {
        confirm(sw, port, ACIS_K_LINK_JOIN, job->key, job->size, 0);
        return;
    }
    sw_bit_set(job->unconfirmed, port);
    if (!was)
        sw_link_job(sw, j);                      /* (else the tick tells again) */
}

/* The parent confirms (or refuses) what this switch told of a job. */
void sw_job_told(struct acis_sw *sw, const struct acis_hdr *h)
{
    uint32_t j = sw_find_job(sw, h->job_key);
    if (j == SW_NONE)
        return;
    struct sw_job *job = &sw->jobs[j];
    int join = ACIS_OPC_KIND(h->opcode) == ACIS_K_LINK_JOIN;
    if (join != sw_job_present(job))
        return;                                  /* since changed: told again */
    if (join && (h->flags & ACIS_F_ERROR)) {
        job->told = 0;
        settle(sw, j, 1);
    } else if (join) {
        job->told = 1;
        settle(sw, j, 0);
    } else {
        job->told = job->asked = 0;
    }
    sw_job_done(sw, j);
}

