package dev.kvindexer;
public final class Main { public static void main(String[] a) {} }
