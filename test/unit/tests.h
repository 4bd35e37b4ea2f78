/*
 * tests.h
 *		The prototype of every unit test, from the list the Makefile generates
 *		(build/gen/unit_tests.list): each definition
 *
 *			void
 *			test_NAME(void)
 *
 *		at the start of a line in a C file of test/unit is a test, registered there
 *		once, and run by main.c in the order of their files' paths, then of
 *		definition.  A test written otherwise has no prototype, which
 *		-Wmissing-prototypes refuses; helpers are static.
 */
#ifndef SB_UNIT_TESTS_H
#define SB_UNIT_TESTS_H

#define SB_UNIT_TEST(fn) extern void fn(void);
#include "unit_tests.list"
#undef SB_UNIT_TEST

#endif							/* SB_UNIT_TESTS_H */
