/**
 * Configuration records ({@code *Config}) of every command and component, validated on construction; a leaf that
 * imports no other package of the project.
 */
package dev.kvindexer.config;
