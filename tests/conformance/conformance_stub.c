/* placeholder until the conformance framework lands */
typedef int tc_conformance_placeholder_;
