/** Coverage-guided fuzzing (Jazzer) of the bytes a client may send, through the real pipeline. */
package dev.crossbar.server.fuzz;
