/** The command line: flags and environment mapped onto {@link dev.crossbar.server.config.ServerConfig}. */
package dev.crossbar.server.cli;
