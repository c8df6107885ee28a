"""From evidence to answer options: labelled spans, the ranked candidates, the options a question's form allows."""
