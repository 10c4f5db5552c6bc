package decode

// RaceEnabled is raceEnabled for the tests of package decode_test.
const RaceEnabled = raceEnabled
