/**
 * ZMQ settings shared by every component that talks ZMQ to another process: which endpoints are valid to connect or
 * bind, and the options of the JeroMQ sockets that remain (replica sync). A leaf: it imports no other
 * package of the project.
 */
package dev.kvindexer.zmq;
