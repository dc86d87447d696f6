/** The Crossbar relay server: configuration and lifecycle; the pipeline lives in the subpackages. */
package dev.crossbar.server;
