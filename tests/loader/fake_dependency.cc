// A library that the missing_dependency fake plugin links against and that the dynamic loader
// cannot find (see CMakeLists.txt).
extern "C" int fake_dependency_value() { return 7; }
