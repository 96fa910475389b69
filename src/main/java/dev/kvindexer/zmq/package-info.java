/**
 * ZMQ shared by every component that talks ZMQ to another process: which endpoints are valid to connect or bind,
 * the options of the JeroMQ socket that remains (the replica-sync publisher), and our own ZMTP ({@code zmtp}). Imports
 * nothing of the project but the network budget.
 */
package dev.kvindexer.zmq;
