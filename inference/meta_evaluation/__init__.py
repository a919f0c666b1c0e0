"""How far metrics agree with radiologists: RadPref, the clinical ranking suite, correlation and preference
accuracy, finding-level and significance agreement."""
