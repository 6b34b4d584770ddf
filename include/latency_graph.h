/* latency_graph.h - LATENCY GRAPH <event> (latency_graph.c). */
#ifndef FERRY_LATENCY_GRAPH_H
#define FERRY_LATENCY_GRAPH_H

#include "client.h"

/* LATENCY GRAPH <event>: a text chart of the event's latency samples. */
void latency_graph(client *c);

#endif
