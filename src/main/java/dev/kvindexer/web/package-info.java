/**
 * What every HTTP service of the jar shares: the hardened server edge (timeouts, TLS, codec refusals), JSON and
 * msgpack bodies read with declared sizes checked, error answers, bearer auth, the access log, per-request metrics.
 */
package dev.kvindexer.web;
