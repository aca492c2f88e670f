/* Shell-style name matching and the test selector built on it
 * (tests=pmu.*,-pmu.offcore* on the kernel command line). */
#ifndef LIB_GLOB_H
#define LIB_GLOB_H

#include <stdbool.h>

/*
 * Whole-name match of a glob: '*' any run of characters (also empty), '?'
 * one character, "[...]" one character of a class: ranges "a-z", negation
 * by a leading '!' or '^', a ']' right after the '[' (or after the '!'/'^')
 * is a member. A '[' without a closing ']' is an ordinary character. No
 * character is special otherwise: no '/' rule, no backslash escapes.
 * Time is O(len(pattern) * len(name)); there is no recursion.
 */
bool glob_match(const char *pattern, const char *name);

/*
 * selector: comma-separated globs, empty items ignored; an item starting
 * with '-' excludes. name is selected when it matches no exclusion and
 * either matches some inclusion or, when the selector has no inclusion at
 * all, default_on is true. Order does not matter: exclusion always wins.
 * A NULL or empty selector gives default_on.
 */
bool glob_select(const char *selector, const char *name, bool default_on);

#endif
